//! Column metadata that a result carries to the client: the MySQL type, collation, display
//! length, decimals and flags of every column.
//!
//! Invariants: [`ColumnDef::new`] derives the metadata MySQL 8.0 reports for an expression of
//! that type (binary collation 63 and the `BINARY`/`NUM` flags for numbers and dates, utf8mb4
//! for text), so a column built without further calls already reads right in clients; builders
//! only refine it. Clients rely on these values: PyMySQL decodes BLOB vs TEXT by collation 63,
//! DECIMAL scale comes from `decimals`, table printers size columns from `length`.

/// MySQL collation id of `binary` (numbers, dates, BLOBs).
pub const COLLATION_BINARY: u16 = 63;
/// MySQL collation id of `utf8mb4_0900_ai_ci`, the MySQL 8.0 default.
pub const COLLATION_UTF8MB4_0900_AI_CI: u16 = 255;
/// Bytes per character of utf8mb4, used for display lengths of text columns.
pub const UTF8MB4_MAX_BYTES_PER_CHAR: u32 = 4;

/// The MySQL type of a column, independent of wire encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// TINYINT.
    Tiny,
    /// SMALLINT.
    Short,
    /// MEDIUMINT.
    Int24,
    /// INT.
    Long,
    /// BIGINT.
    LongLong,
    /// FLOAT.
    Float,
    /// DOUBLE.
    Double,
    /// DECIMAL(p, s).
    Decimal,
    /// YEAR.
    Year,
    /// DATE.
    Date,
    /// TIME.
    Time,
    /// DATETIME.
    DateTime,
    /// TIMESTAMP.
    Timestamp,
    /// VARCHAR / VARBINARY.
    VarChar,
    /// CHAR / BINARY.
    Char,
    /// TEXT / BLOB.
    Blob,
    /// JSON.
    Json,
    /// BIT(n).
    Bit,
    /// The type of a bare NULL.
    Null,
}

impl ColumnType {
    /// True for the integer, floating and decimal types.
    #[must_use]
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            Self::Tiny
                | Self::Short
                | Self::Int24
                | Self::Long
                | Self::LongLong
                | Self::Float
                | Self::Double
                | Self::Decimal
                | Self::Year
        )
    }

    /// True for types whose values are text in a character set.
    #[must_use]
    pub fn is_text(self) -> bool {
        matches!(self, Self::VarChar | Self::Char | Self::Blob | Self::Json)
    }

    /// Default display length MySQL reports for an expression of this type.
    fn default_length(self) -> u32 {
        match self {
            Self::Tiny => 4,
            Self::Short => 6,
            Self::Int24 => 9,
            Self::Long => 11,
            Self::LongLong => 20,
            Self::Float => 12,
            Self::Double => 22,
            Self::Decimal => 12,
            Self::Year => 4,
            Self::Date => 10,
            Self::Time => 10,
            Self::DateTime | Self::Timestamp => 19,
            Self::VarChar | Self::Char => 255 * UTF8MB4_MAX_BYTES_PER_CHAR,
            Self::Blob | Self::Json => u32::MAX,
            Self::Bit => 1,
            Self::Null => 0,
        }
    }
}

/// Column flags as MySQL defines them (`NOT_NULL_FLAG` …), carried as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColumnFlags(pub u16);

impl ColumnFlags {
    /// The column cannot be NULL.
    pub const NOT_NULL: Self = Self(1);
    /// Part of the primary key.
    pub const PRIMARY_KEY: Self = Self(2);
    /// Part of a unique key.
    pub const UNIQUE_KEY: Self = Self(4);
    /// Part of a non-unique key.
    pub const MULTIPLE_KEY: Self = Self(8);
    /// A BLOB or TEXT column.
    pub const BLOB: Self = Self(16);
    /// An unsigned number.
    pub const UNSIGNED: Self = Self(32);
    /// Binary collation.
    pub const BINARY: Self = Self(128);
    /// AUTO_INCREMENT.
    pub const AUTO_INCREMENT: Self = Self(512);
    /// No default value.
    pub const NO_DEFAULT_VALUE: Self = Self(4096);
    /// A numeric column.
    pub const NUM: Self = Self(32768);

    /// Union of two flag sets.
    #[must_use]
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// True if every bit of `other` is set.
    #[must_use]
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Metadata of one result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    /// Column name or alias as the client sees it.
    pub name: String,
    /// Underlying column name (empty for expressions).
    pub original_name: String,
    /// Table alias (empty for expressions).
    pub table: String,
    /// Underlying table name (empty for expressions).
    pub original_table: String,
    /// Database of the table (empty for expressions).
    pub database: String,
    /// MySQL type.
    pub column_type: ColumnType,
    /// Collation id ([`COLLATION_BINARY`] for numbers, dates and BLOBs).
    pub collation: u16,
    /// Maximum display length in bytes.
    pub length: u32,
    /// Digits after the decimal point (DECIMAL scale, fractional seconds); 0x1f for
    /// "not fixed" floating point as MySQL reports it.
    pub decimals: u8,
    /// Column flags.
    pub flags: ColumnFlags,
}

impl ColumnDef {
    /// A nullable expression column of `column_type` with MySQL's default metadata.
    #[must_use]
    pub fn new(name: impl Into<String>, column_type: ColumnType) -> Self {
        let binary = !column_type.is_text();
        let mut flags = ColumnFlags::default();
        if binary && column_type != ColumnType::Null {
            flags = flags.with(ColumnFlags::BINARY);
        }
        if column_type.is_numeric() {
            flags = flags.with(ColumnFlags::NUM);
        }
        if column_type == ColumnType::Blob {
            flags = flags.with(ColumnFlags::BLOB);
        }
        let decimals = match column_type {
            ColumnType::Float | ColumnType::Double => 31,
            _ => 0,
        };
        Self {
            name: name.into(),
            original_name: String::new(),
            table: String::new(),
            original_table: String::new(),
            database: String::new(),
            column_type,
            collation: if binary {
                COLLATION_BINARY
            } else {
                COLLATION_UTF8MB4_0900_AI_CI
            },
            length: column_type.default_length(),
            decimals,
            flags,
        }
    }

    /// Marks the column as a column of table `table` in database `database`.
    #[must_use]
    pub fn in_table(mut self, database: &str, table: &str) -> Self {
        self.database = database.to_owned();
        self.table = table.to_owned();
        self.original_table = table.to_owned();
        self.original_name = self.name.clone();
        self
    }

    /// Adds flags.
    #[must_use]
    pub fn with_flags(mut self, flags: ColumnFlags) -> Self {
        self.flags = self.flags.with(flags);
        self
    }

    /// Sets the display length in bytes.
    #[must_use]
    pub fn with_length(mut self, length: u32) -> Self {
        self.length = length;
        self
    }

    /// Sets the decimals (DECIMAL scale or fractional-second digits).
    #[must_use]
    pub fn with_decimals(mut self, decimals: u8) -> Self {
        self.decimals = decimals;
        self
    }

    /// Sets a binary collation: the column holds bytes, not text (VARBINARY, BLOB).
    #[must_use]
    pub fn binary(mut self) -> Self {
        self.collation = COLLATION_BINARY;
        self.flags = self.flags.with(ColumnFlags::BINARY);
        self
    }
}
