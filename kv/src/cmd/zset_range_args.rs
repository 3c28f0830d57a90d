//! Argument parsing of the sorted-set range commands: score bounds (`1.5`, `(1.5`, `-inf`,
//! `+inf`), lex bounds (`[m`, `(m`, `-`, `+`), and the ZRANGE-family syntax (BYSCORE, BYLEX,
//! REV, LIMIT, WITHSCORES) with Redis's error texts and checking order.
//!
//! Invariant: parsing never touches storage, so every range command reports argument errors
//! before it reads or writes a key.

use crate::args::{arg, is, parse_i64};
use crate::error::{KvError, KvResult};
use crate::score::{ScoreBound, parse_score_bound};
use bytes::Bytes;

const NOT_FLOAT_RANGE: &str = "ERR min or max is not a float";
const NOT_LEX_RANGE: &str = "ERR min or max not valid string range item";

/// One end of a lex range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexBound {
    /// `-`.
    NegInf,
    /// `+`.
    PosInf,
    /// `[member`.
    Incl(Bytes),
    /// `(member`.
    Excl(Bytes),
}

fn parse_lex_bound(raw: &Bytes) -> Option<LexBound> {
    match raw.first() {
        Some(b'+') if raw.len() == 1 => Some(LexBound::PosInf),
        Some(b'-') if raw.len() == 1 => Some(LexBound::NegInf),
        Some(b'[') => Some(LexBound::Incl(raw.slice(1..))),
        Some(b'(') => Some(LexBound::Excl(raw.slice(1..))),
        _ => None,
    }
}

/// What a range command selects.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    /// Ranks `start..=end` (negative from the end).
    Rank(i64, i64),
    /// Scores between two bounds.
    Score(ScoreBound, ScoreBound),
    /// Members between two lex bounds.
    Lex(LexBound, LexBound),
}

/// Parses a score range (`ERR min or max is not a float`).
pub fn parse_score_range(min: &[u8], max: &[u8]) -> KvResult<Selection> {
    match (parse_score_bound(min), parse_score_bound(max)) {
        (Some(a), Some(b)) => Ok(Selection::Score(a, b)),
        _ => Err(KvError::command(NOT_FLOAT_RANGE)),
    }
}

/// Parses a lex range (`ERR min or max not valid string range item`).
pub fn parse_lex_range(min: &Bytes, max: &Bytes) -> KvResult<Selection> {
    match (parse_lex_bound(min), parse_lex_bound(max)) {
        (Some(a), Some(b)) => Ok(Selection::Lex(a, b)),
        _ => Err(KvError::command(NOT_LEX_RANGE)),
    }
}

/// How a range command reads its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeCommand {
    /// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT o c] [WITHSCORES].
    Zrange,
    /// ZREVRANGE key start stop [WITHSCORES].
    Zrevrange,
    /// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT o c].
    Zrangebyscore,
    /// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT o c].
    Zrevrangebyscore,
    /// ZRANGEBYLEX key min max [LIMIT o c].
    Zrangebylex,
    /// ZREVRANGEBYLEX key max min [LIMIT o c].
    Zrevrangebylex,
    /// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT o c].
    Zrangestore,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RangeType {
    Auto,
    Rank,
    Score,
    Lex,
}

/// A parsed ZRANGE-family request.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeRequest {
    /// What to select.
    pub sel: Selection,
    /// Highest first.
    pub rev: bool,
    /// LIMIT offset (negative: nothing).
    pub offset: i64,
    /// LIMIT count (negative: all).
    pub limit: i64,
    /// WITHSCORES.
    pub withscores: bool,
}

/// Parses `a b [options]` of a ZRANGE-family command, `a` being `args[first]`. ZRANGESTORE
/// takes ZRANGE's options except WITHSCORES.
pub fn parse_range_request(
    args: &[Bytes],
    first: usize,
    cmd: RangeCommand,
) -> KvResult<RangeRequest> {
    use RangeCommand as R;
    let (mut a, mut b) = (arg(args, first)?, arg(args, first + 1)?);
    let (mut kind, mut rev) = match cmd {
        R::Zrange | R::Zrangestore => (RangeType::Auto, None),
        R::Zrevrange => (RangeType::Rank, Some(true)),
        R::Zrangebyscore => (RangeType::Score, Some(false)),
        R::Zrevrangebyscore => (RangeType::Score, Some(true)),
        R::Zrangebylex => (RangeType::Lex, Some(false)),
        R::Zrevrangebylex => (RangeType::Lex, Some(true)),
    };
    let (mut withscores, mut offset, mut limit) = (false, 0i64, -1i64);
    let mut i = first + 2;
    while let Some(option) = args.get(i) {
        if cmd != R::Zrangestore && is(option, "WITHSCORES") {
            withscores = true;
        } else if is(option, "LIMIT") && i + 2 < args.len() {
            offset = parse_i64(arg(args, i + 1)?)?;
            limit = parse_i64(arg(args, i + 2)?)?;
            i += 2;
        } else if rev.is_none() && is(option, "REV") {
            rev = Some(true);
        } else if kind == RangeType::Auto && is(option, "BYLEX") {
            kind = RangeType::Lex;
        } else if kind == RangeType::Auto && is(option, "BYSCORE") {
            kind = RangeType::Score;
        } else {
            return Err(KvError::syntax());
        }
        i += 1;
    }
    let rev = rev.unwrap_or(false);
    if kind == RangeType::Auto {
        kind = RangeType::Rank;
    }
    if limit != -1 && kind == RangeType::Rank {
        return Err(KvError::command(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if withscores && kind == RangeType::Lex {
        return Err(KvError::command(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    if rev && kind != RangeType::Rank {
        std::mem::swap(&mut a, &mut b);
    }
    let sel = match kind {
        RangeType::Score => parse_score_range(a, b)?,
        RangeType::Lex => parse_lex_range(a, b)?,
        RangeType::Auto | RangeType::Rank => Selection::Rank(parse_i64(a)?, parse_i64(b)?),
    };
    Ok(RangeRequest {
        sel,
        rev,
        offset,
        limit,
        withscores,
    })
}
