//! Typed values crossing the session boundary: prepared-statement parameters going in, result
//! cells coming out.
//!
//! Invariants: values are never carried as SQL text to be spliced into a statement; a
//! parameter keeps the type the client bound (signed vs unsigned integers, exact decimals as
//! their decimal text, bytes as bytes). Date and time parts are stored as the client sent them;
//! range checks belong to the SQL layer that converts them to a column type.

/// A calendar date (`DATE`). Zero parts are allowed, as in MySQL's `0000-00-00`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Date {
    /// Year, 0–9999.
    pub year: u16,
    /// Month, 0–12.
    pub month: u8,
    /// Day, 0–31.
    pub day: u8,
}

/// A date and time of day (`DATETIME`, `TIMESTAMP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateTime {
    /// The date part.
    pub date: Date,
    /// Hour, 0–23.
    pub hour: u8,
    /// Minute, 0–59.
    pub minute: u8,
    /// Second, 0–59.
    pub second: u8,
    /// Microseconds, 0–999999.
    pub microsecond: u32,
}

/// A signed duration (`TIME`), which in MySQL may exceed 24 hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Time {
    /// True for a negative duration.
    pub negative: bool,
    /// Whole days.
    pub days: u32,
    /// Hours, 0–23.
    pub hours: u8,
    /// Minutes, 0–59.
    pub minutes: u8,
    /// Seconds, 0–59.
    pub seconds: u8,
    /// Microseconds, 0–999999.
    pub microseconds: u32,
}

/// One typed value.
///
/// Aligned as the executor's `Datum` is (16, for its 128-bit decimals), with the same size, so
/// converting a result row of datums into values reuses the row's allocation instead of
/// allocating a new one per row (`Vec` collects in place only between equal alignments).
#[derive(Debug, Clone, PartialEq)]
#[repr(align(16))]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A single-precision float.
    Float(f32),
    /// A double-precision float.
    Double(f64),
    /// An exact decimal number as its canonical text (`-12.50`).
    Decimal(String),
    /// Bytes: text in the column's collation, or binary data.
    Bytes(Vec<u8>),
    /// A date.
    Date(Date),
    /// A date and time.
    DateTime(DateTime),
    /// A duration.
    Time(Time),
}

impl Value {
    /// A text value.
    #[must_use]
    pub fn text(s: impl Into<String>) -> Self {
        Self::Bytes(s.into().into_bytes())
    }

    /// True for SQL NULL.
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
}
