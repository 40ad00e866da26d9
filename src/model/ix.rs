//! The indexes that resolve a reference between records: a service's organisation, an
//! organisation's services, a service's locations. Each kind is its own type, so that a
//! service index used where an organisation index belongs does not compile (issue 22).

use super::{Directory, Location, Organisation, Service};

/// Defines an index type over one of the directory's lists, and indexing that list with it.
macro_rules! record_index {
    ($(#[$doc:meta])* $name:ident, $record:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(u32);

        impl $name {
            /// The index of position `ix` (a directory holds fewer than 2³² records of a kind).
            #[inline]
            pub fn new(ix: usize) -> $name {
                $name(u32::try_from(ix).expect("fewer than 2^32 records of a kind"))
            }

            /// The position, for indexing.
            #[inline]
            pub const fn get(self) -> usize {
                self.0 as usize
            }

            /// Every index below `len`, ascending.
            pub fn all(len: usize) -> impl DoubleEndedIterator<Item = $name> + ExactSizeIterator {
                (0..len).map($name::new)
            }
        }

        impl std::ops::Index<$name> for [$record] {
            type Output = $record;
            #[inline]
            fn index(&self, ix: $name) -> &$record {
                &self[ix.get()]
            }
        }

        impl std::ops::Index<$name> for Vec<$record> {
            type Output = $record;
            #[inline]
            fn index(&self, ix: $name) -> &$record {
                &self[ix.get()]
            }
        }

        impl std::ops::IndexMut<$name> for Vec<$record> {
            #[inline]
            fn index_mut(&mut self, ix: $name) -> &mut $record {
                &mut self[ix.get()]
            }
        }
    };
}

record_index!(
    /// Index of an organisation in [`Directory::organisations`].
    OrgIx,
    Organisation
);
record_index!(
    /// Index of a service in [`Directory::services`].
    ServiceIx,
    Service
);
record_index!(
    /// Index of a location in [`Directory::locations`].
    LocationIx,
    Location
);

impl Directory {
    /// Each service with its index, in index order.
    pub(crate) fn indexed_services(&self) -> impl Iterator<Item = (ServiceIx, &Service)> {
        self.services.iter().enumerate().map(|(ix, s)| (ServiceIx::new(ix), s))
    }
}
