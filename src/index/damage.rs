//! What a search index file's checks find wrong (its header, checksum, core and rendered
//! section), one variant a check.

/// What is wrong with a search index file that [`super::IndexError::Corrupt`] refuses: the checks
/// that keep a damaged file from being served (or from panicking a request).
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    /// Fewer bytes than the header's fields.
    #[error("the header is cut short")]
    HeaderCutShort,
    /// The file is longer or shorter than its header's sections.
    #[error(
        "the file has {actual} bytes, its header announces {} (cut short, or bytes added)",
        announced.map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string())
    )]
    Length {
        /// Bytes of the file.
        actual: u64,
        /// Bytes the header announces (`None`: past 2^64).
        announced: Option<u64>,
    },
    /// The body's XXH3 is not the header's.
    #[error("its checksum does not match its contents (stored {stored:016x}, computed {computed:016x})")]
    Checksum {
        /// The header's.
        stored: u64,
        /// The body's.
        computed: u64,
    },
    /// The core section does not decode.
    #[error("{0}")]
    Undecodable(postcard::Error),
    /// More services or locations than 32-bit numbers count.
    #[error("too many records")]
    TooManyRecords,
    /// The services' areas, categories and locations are not one row per service.
    #[error("the services' tables differ in length")]
    ServiceTables,
    /// A table's offsets start past 0, go back or end short of its items.
    #[error("a table's offsets are out of order")]
    Offsets,
    /// A service names a category, area or location that is not there.
    #[error("a service refers to a record that does not exist")]
    DanglingReference,
    /// Two services share a name rank, or one is past the end.
    #[error("the services' name ranks are not a permutation")]
    NameRanks,
    /// A service area's kind is none of [`crate::model::AreaKind`]'s.
    #[error("a service area is of a kind that does not exist")]
    AreaKind,
    /// A category's parent, children or subtree point outside the tree.
    #[error("category {0} refers to a node that does not exist")]
    CategoryNode(usize),
    /// A top-level category is not in the tree.
    #[error("a top-level category does not exist")]
    CategoryRoot,
    /// The postcode table's columns are not one row per postcode.
    #[error("the postcode table's columns differ in length")]
    PostcodeColumns,
    /// A postcode's code lies outside the codes' text.
    #[error("a postcode's code is out of bounds")]
    PostcodeBounds,
    /// The postcodes are not ascending.
    #[error("the postcodes are not in order")]
    PostcodeOrder,
    /// The postcodes' codes leave text over.
    #[error("the postcode codes do not fill their text")]
    PostcodeText,
    /// A postcode lies in a service area that is not there.
    #[error("a postcode lies in a service area that does not exist")]
    PostcodeArea,
    /// A string table's offsets go back or past its bytes.
    #[error("string table offsets out of order")]
    StringOffsets,
    /// A string table's strings leave bytes over.
    #[error("string table has trailing bytes")]
    StringTrailing,
    /// The text index's term tables are not one row per term.
    #[error("text index tables differ in length")]
    TextTables,
    /// A term's stem is not in the text index.
    #[error("text index names a stem that does not exist")]
    TextStem,
    /// The posting lists' offsets do not cut the postings into one list per term.
    #[error("text index posting offsets are inconsistent")]
    PostingOffsets,
    /// A posting list is not ascending, or names a service that is not there.
    #[error("text index posting list out of order or out of range")]
    PostingList,
    /// The rendered section is shorter than its table of offsets.
    #[error("the rendered results' table is cut short")]
    RenderedTable,
    /// A rendered result's offset goes back (or the first is not 0).
    #[error("rendered result {0}'s offset is out of order")]
    RenderedOffset(usize),
    /// The rendered results' offsets do not end at the end of the section.
    #[error("the rendered results do not fill their section")]
    RenderedFill,
}
