//! Located data errors: every rule break names the file, the line, the field and the value.

use std::fmt;

/// Most errors reported by one run; the rest are counted.
pub(crate) const MAX_REPORTED: usize = 200;

/// One problem in the dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataError {
    /// File name relative to the input directory, e.g. `services.jsonl`.
    pub file: String,
    /// 1-based line, for `.jsonl` and `.csv` files.
    pub line: Option<usize>,
    /// The field, e.g. `categories[1]` or `latitude`.
    pub field: Option<String>,
    /// The offending value, shortened.
    pub value: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl DataError {
    /// An error about a whole file.
    pub fn file(file: impl Into<String>, message: impl Into<String>) -> DataError {
        DataError { file: file.into(), line: None, field: None, value: None, message: message.into() }
    }

    /// An error about one field of one line.
    pub fn at(
        file: impl Into<String>,
        line: Option<usize>,
        field: impl Into<String>,
        value: impl fmt::Display,
        message: impl Into<String>,
    ) -> DataError {
        DataError {
            file: file.into(),
            line,
            field: Some(field.into()),
            value: Some(shorten(&value.to_string())),
            message: message.into(),
        }
    }
}

fn shorten(value: &str) -> String {
    const MAX: usize = 80;
    match value.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &value[..cut]),
        None => value.to_owned(),
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        if let Some(value) = &self.value {
            write!(f, ", value {value:?}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem found in one run, in file and line order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataErrors {
    /// The reported errors, at most `MAX_REPORTED`.
    pub errors: Vec<DataError>,
    /// How many more were found but not kept.
    pub more: usize,
}

impl DataErrors {
    /// Records one error.
    pub fn push(&mut self, error: DataError) {
        if self.errors.len() < MAX_REPORTED {
            self.errors.push(error);
        } else {
            self.more += 1;
        }
    }

    /// How many errors were found, kept or not.
    pub fn total(&self) -> usize {
        self.errors.len() + self.more
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// `Err(self)` when anything was found.
    pub(crate) fn into_result<T>(self, value: T) -> Result<T, DataErrors> {
        if self.is_empty() { Ok(value) } else { Err(self) }
    }

    /// Takes over the errors of another run.
    pub fn extend(&mut self, other: DataErrors) {
        for error in other.errors {
            self.push(error);
        }
        self.more += other.more;
    }
}

impl fmt::Display for DataErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total();
        writeln!(f, "the dataset has {total} error{}:", if total == 1 { "" } else { "s" })?;
        for error in &self.errors {
            writeln!(f, "  {error}")?;
        }
        if self.more > 0 {
            writeln!(f, "  … and {} more", self.more)?;
        }
        Ok(())
    }
}

impl std::error::Error for DataErrors {}
