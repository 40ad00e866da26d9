//! Large numeric columns of the index's core as raw little-endian bytes.
//!
//! postcard writes a `Vec<u32>` as one variable-length integer per element and reads it
//! back element by element through serde, which made decoding the core (millions of
//! posting entries, offsets and points at 100,000 services) most of the start-up time.
//! Written as one byte string instead, a column decodes as a borrowed slice cut into
//! fixed-width values: a copy, not a parse. Used as `#[serde(with = "packed")]` on a
//! `Vec<T>` field whose `T` is [`Packed`].

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

use crate::model::Point;

/// A fixed-width value with a little-endian byte form.
pub(crate) trait Packed: Copy {
    /// Bytes per value.
    const WIDTH: usize;
    /// Appends the value's bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The value of exactly [`Packed::WIDTH`] bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! packed_int {
    ($($t:ty),*) => {$(
        impl Packed for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> $t {
                <$t>::from_le_bytes(bytes.try_into().expect("cut to the width"))
            }
        }
    )*};
}
packed_int!(u8, u16, u32, f64);

impl Packed for Point {
    const WIDTH: usize = 16;
    fn put(self, out: &mut Vec<u8>) {
        self.lat.put(out);
        self.lon.put(out);
    }
    fn get(bytes: &[u8]) -> Point {
        Point { lat: f64::get(&bytes[..8]), lon: f64::get(&bytes[8..]) }
    }
}

/// Writes the values as one byte string.
pub(crate) fn serialize<T: Packed, S: Serializer>(values: &[T], serializer: S) -> Result<S::Ok, S::Error> {
    let mut bytes = Vec::with_capacity(values.len() * T::WIDTH);
    for &v in values {
        v.put(&mut bytes);
    }
    serializer.serialize_bytes(&bytes)
}

/// Reads the values back; a byte string that is not a whole number of values is an error.
pub(crate) fn deserialize<'de, T: Packed, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    let bytes = <&'de [u8]>::deserialize(deserializer)?;
    if !bytes.len().is_multiple_of(T::WIDTH) {
        return Err(D::Error::custom(format!("a column of {}-byte values is {} bytes long", T::WIDTH, bytes.len())));
    }
    Ok(bytes.chunks_exact(T::WIDTH).map(T::get).collect())
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Columns {
        #[serde(with = "super")]
        small: Vec<u16>,
        #[serde(with = "super")]
        large: Vec<u32>,
        #[serde(with = "super")]
        points: Vec<Point>,
    }

    #[test]
    fn round_trips_and_refuses_a_ragged_column() {
        let columns = Columns {
            small: vec![0, 1, u16::MAX],
            large: vec![7, u32::MAX],
            points: vec![Point { lat: 55.86, lon: -4.25 }, Point { lat: -0.0, lon: f64::MIN_POSITIVE }],
        };
        let bytes = postcard::to_allocvec(&columns).unwrap();
        assert_eq!(postcard::from_bytes::<Columns>(&bytes).unwrap(), columns);
        // The first column's length prefix (6 bytes) made odd: 5 bytes of u16 values.
        let mut ragged = bytes.clone();
        ragged[0] = 5;
        assert!(postcard::from_bytes::<Columns>(&ragged).is_err());
    }
}
