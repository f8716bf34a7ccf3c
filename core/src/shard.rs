//! Server-side sharded list and watch (KEP-5866, alpha in Kubernetes 1.36 behind the
//! `ShardedListAndWatch` feature gate of kube-apiserver, off by default).
//!
//! A LIST, WATCH or DELETECOLLECTION may carry a `shardSelector` query parameter
//! ([`ListParams::shard_selector`](crate::ListParams::shard_selector),
//! [`WatchParams::shard_selector`](crate::WatchParams::shard_selector)). The server hashes one
//! metadata field of every object with 64-bit FNV-1a ([`fnv1a64`]) and keeps the objects
//! whose hash falls in one of the selector's half-open ranges `[start, end)`:
//!
//! ```text
//! shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
//! shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000')
//! ```
//!
//! The grammar, as kube-apiserver's parser (`k8s.io/apiserver/pkg/sharding`, a CEL parse
//! whose tree is walked, never evaluated) accepts it:
//!
//! - one or more `shardRange(field, start, end)` calls joined by `||` (parentheses may group
//!   them; nothing else of CEL is allowed);
//! - `field` is `object.metadata.uid` or `object.metadata.namespace`, the same in every range;
//! - `start` and `end` are quoted strings: `0x` and exactly 16 lowercase hex digits, or
//!   `'0x10000000000000000'` (2^64, the end of the hash space); `start < end`.
//!
//! [`ShardSelector`] is that grammar as a type: [`Display`](std::fmt::Display) writes the
//! canonical text above (ranges joined by `" || "`), [`ShardSelector::parse`] reads it back
//! and names the bad part in a [`ShardSelectorError`]. The test server parses with the same
//! function. A server that honours the selector answers a LIST with
//! `metadata.shardInfo.selector` (the selector as the request gave it: [`ShardInfo`], on
//! [`ObjectList::shard_info`](crate::ObjectList::shard_info)); a server without the feature
//! (or with the gate off) ignores the parameter as it ignores any unknown one, answers the
//! whole collection and no `shardInfo`, and a client then filters on its own side with
//! [`ShardSelector::matches`]. A WATCH has no such echo (a watch event has no field for it):
//! a client learns whether the server shards from a LIST with the same selector first.
//!
//! What is alpha (Kubernetes 1.36): the `shardSelector` field of `ListOptions`, `ShardInfo` in
//! `ListMeta`, the `shardRange()` grammar and its two fields; all may change before beta.

use std::fmt;
use std::str::FromStr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// The end of the 64-bit hash space, 2^64: the exclusive end of the last shard.
pub const HASH_SPACE_END: u128 = 1 << 64;

/// 64-bit FNV-1a of `bytes`: the hash kube-apiserver shards on (Go's `hash/fnv` `New64a`), and
/// the one kinform's own sharded controllers weigh members with.
pub fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// `metadata.shardInfo` of a sharded LIST answer (`metav1.ShardInfo`): the server honoured a
/// shard selector, and the list is that shard, not the whole collection.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ShardInfo {
    /// `selector`: the shard selector of the request, echoed back.
    pub selector: String,
}

/// The metadata field a shard range hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShardField {
    /// `object.metadata.uid`.
    Uid,
    /// `object.metadata.namespace` (`""` for cluster-scoped objects).
    Namespace,
}

impl ShardField {
    /// The field path as the selector writes it.
    pub fn path(self) -> &'static str {
        match self {
            Self::Uid => "object.metadata.uid",
            Self::Namespace => "object.metadata.namespace",
        }
    }

    fn from_path(path: &str) -> Option<Self> {
        match path {
            "object.metadata.uid" => Some(Self::Uid),
            "object.metadata.namespace" => Some(Self::Namespace),
            _ => None,
        }
    }

    /// The field's value in `meta` (`""` when unset, as the server reads an unset field).
    pub fn value(self, meta: &ObjectMeta) -> &str {
        match self {
            Self::Uid => meta.uid.as_deref(),
            Self::Namespace => meta.namespace.as_deref(),
        }
        .unwrap_or_default()
    }
}

impl fmt::Display for ShardField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path())
    }
}

/// Which bound of a `shardRange()` an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The second argument, the inclusive start.
    Start,
    /// The third argument, the exclusive end.
    End,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Start => "start",
            Self::End => "end",
        })
    }
}

/// Why a shard selector was refused; each names the part at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShardSelectorError {
    /// Nothing but whitespace (the server refuses it: leave the parameter out instead).
    #[error("the selector is empty (leave the parameter out to select every object)")]
    Empty,
    /// Not the shape `shardRange(...) || ...` at byte `at` of the text.
    #[error("at byte {at}: expected {expected}")]
    Syntax {
        /// Byte offset in the selector text.
        at: usize,
        /// What would have been accepted there.
        expected: &'static str,
    },
    /// A function other than `shardRange`.
    #[error("function {0:?} is not supported: only shardRange() calls joined by || are")]
    UnsupportedFunction(String),
    /// `shardRange()` with other than three arguments.
    #[error("shardRange() takes 3 arguments (field, start, end), not {0}")]
    Arity(usize),
    /// A first argument that is not a field path.
    #[error("the first argument of shardRange() must be a field path such as object.metadata.uid")]
    NotAFieldPath,
    /// A field path other than the two supported ones.
    #[error(
        "field {0:?} cannot be sharded on: use object.metadata.uid or object.metadata.namespace"
    )]
    UnsupportedField(String),
    /// A bound that is not a string literal.
    #[error("the {0} of shardRange() must be a quoted string such as '0x0000000000000000'")]
    NotAString(Bound),
    /// A bound without its `0x`.
    #[error("the {bound} {value:?} must start with 0x")]
    MissingPrefix {
        /// Which bound.
        bound: Bound,
        /// The bound as written.
        value: String,
    },
    /// A bound with a character that is not a lowercase hex digit.
    #[error("the {bound} {value:?} holds {found:?}, which is not a lowercase hex digit")]
    BadDigit {
        /// Which bound.
        bound: Bound,
        /// The bound as written.
        value: String,
        /// The first character at fault.
        found: char,
    },
    /// A bound of other than 16 digits (and not 2^64).
    #[error(
        "the {bound} {value:?} must have exactly 16 hex digits after 0x (or be 0x10000000000000000){}",
        suggestion.as_ref().map(|s| format!("; did you mean {s:?}?")).unwrap_or_default()
    )]
    Width {
        /// Which bound.
        bound: Bound,
        /// The bound as written.
        value: String,
        /// The bound padded to 16 digits, when it was shorter.
        suggestion: Option<String>,
    },
    /// `start >= end`.
    #[error("the range from {start} to {end} is empty: its start must be below its end")]
    EmptyRange {
        /// The start, canonical.
        start: String,
        /// The end, canonical.
        end: String,
    },
    /// Ranges over different fields.
    #[error("every range must hash the same field, not both {first} and {other}")]
    MixedFields {
        /// The first range's field.
        first: ShardField,
        /// The other field.
        other: ShardField,
    },
    /// [`ShardRange::nth`] with `index >= count` (or `count == 0`).
    #[error("there is no shard {index} of {count}")]
    NoSuchShard {
        /// The index asked for.
        index: u64,
        /// The number of shards.
        count: u64,
    },
}

/// One `shardRange(field, start, end)`: the objects whose field hashes into `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShardRange {
    field: ShardField,
    start: u64,
    end: u128,
}

impl ShardRange {
    /// `[start, end)` of `field`'s hash; `end` at most [`HASH_SPACE_END`], above `start`.
    pub fn new(field: ShardField, start: u64, end: u128) -> Result<Self, ShardSelectorError> {
        if u128::from(start) >= end || end > HASH_SPACE_END {
            return Err(ShardSelectorError::EmptyRange {
                start: bound_text(u128::from(start)),
                end: bound_text(end),
            });
        }
        Ok(Self { field, start, end })
    }

    /// Shard `index` of `count` equal shards of the hash space (the last one ends at 2^64, so
    /// the `count` shards cover it exactly), as kube-apiserver's own tests divide it.
    pub fn nth(field: ShardField, index: u64, count: u64) -> Result<Self, ShardSelectorError> {
        if index >= count {
            return Err(ShardSelectorError::NoSuchShard { index, count });
        }
        let span = HASH_SPACE_END / u128::from(count);
        let start = span * u128::from(index);
        let end = if index + 1 == count {
            HASH_SPACE_END
        } else {
            start + span
        };
        Self::new(field, start as u64, end)
    }

    /// The field hashed.
    pub fn field(&self) -> ShardField {
        self.field
    }

    /// The inclusive start.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The exclusive end (2^64 for the end of the hash space).
    pub fn end(&self) -> u128 {
        self.end
    }

    /// Whether `hash` falls in the range.
    pub fn contains(&self, hash: u64) -> bool {
        hash >= self.start && u128::from(hash) < self.end
    }
}

impl fmt::Display for ShardRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shardRange({}, '{}', '{}')",
            self.field,
            bound_text(u128::from(self.start)),
            bound_text(self.end)
        )
    }
}

/// A bound as the selector writes it: `0x` and 16 digits, or 2^64 with its 17.
fn bound_text(v: u128) -> String {
    format!("0x{v:016x}")
}

/// A parsed `shardSelector`: one or more ranges of one field, an object selected when its
/// field's hash falls in any of them. See the module docs for the grammar.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShardSelector {
    ranges: Vec<ShardRange>,
}

impl ShardSelector {
    /// The selector of these ranges (at least one, all of one field).
    pub fn new(ranges: Vec<ShardRange>) -> Result<Self, ShardSelectorError> {
        let Some(first) = ranges.first() else {
            return Err(ShardSelectorError::Empty);
        };
        if let Some(other) = ranges.iter().find(|r| r.field != first.field) {
            return Err(ShardSelectorError::MixedFields {
                first: first.field,
                other: other.field,
            });
        }
        Ok(Self { ranges })
    }

    /// Shard `index` of `count` equal shards of `field`'s hash space ([`ShardRange::nth`]).
    pub fn nth(field: ShardField, index: u64, count: u64) -> Result<Self, ShardSelectorError> {
        Ok(ShardRange::nth(field, index, count)?.into())
    }

    /// This selector `||` `range`.
    pub fn or(mut self, range: ShardRange) -> Result<Self, ShardSelectorError> {
        self.ranges.push(range);
        Self::new(self.ranges)
    }

    /// Parses a selector as kube-apiserver does (module docs).
    pub fn parse(text: &str) -> Result<Self, ShardSelectorError> {
        Parser::new(text).selector()
    }

    /// The ranges, in the order given.
    pub fn ranges(&self) -> &[ShardRange] {
        &self.ranges
    }

    /// The field every range hashes.
    pub fn field(&self) -> ShardField {
        self.ranges[0].field
    }

    /// Whether a field value (a UID, a namespace) is selected.
    pub fn matches_value(&self, value: &str) -> bool {
        let hash = fnv1a64(value.bytes());
        self.ranges.iter().any(|r| r.contains(hash))
    }

    /// Whether the object of `meta` is selected: what the server would answer, for a client
    /// filtering on its own when the server ignored the selector (no `shardInfo`).
    pub fn matches(&self, meta: &ObjectMeta) -> bool {
        self.matches_value(self.field().value(meta))
    }
}

impl From<ShardRange> for ShardSelector {
    fn from(range: ShardRange) -> Self {
        Self {
            ranges: vec![range],
        }
    }
}

impl fmt::Display for ShardSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(" || ")?;
            }
            r.fmt(f)?;
        }
        Ok(())
    }
}

impl FromStr for ShardSelector {
    type Err = ShardSelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The tokens of the CEL subset a selector may use.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token<'a> {
    Ident(&'a str),
    Str(&'a str),
    Dot,
    Comma,
    Open,
    Close,
    Or,
    /// Anything else CEL has (numbers, other operators): never accepted, but skipped as an
    /// argument so that the error can say which argument is wrong.
    Other,
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<(usize, Token<'a>)>,
    pos: usize,
    lex_error: Option<ShardSelectorError>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        let mut p = Self {
            text,
            tokens: Vec::new(),
            pos: 0,
            lex_error: None,
        };
        p.lex();
        p
    }

    fn lex(&mut self) {
        let b = self.text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0c => i += 1,
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'.' => {
                    self.tokens.push((i, Token::Dot));
                    i += 1;
                }
                b',' => {
                    self.tokens.push((i, Token::Comma));
                    i += 1;
                }
                b'(' => {
                    self.tokens.push((i, Token::Open));
                    i += 1;
                }
                b')' => {
                    self.tokens.push((i, Token::Close));
                    i += 1;
                }
                b'|' if b.get(i + 1) == Some(&b'|') => {
                    self.tokens.push((i, Token::Or));
                    i += 2;
                }
                b'\'' | b'"' => {
                    let start = i + 1;
                    let mut j = start;
                    while j < b.len() && b[j] != c && b[j] != b'\\' && b[j] != b'\n' {
                        j += 1;
                    }
                    if j >= b.len() || b[j] != c {
                        self.lex_error = Some(ShardSelectorError::Syntax {
                            at: j.min(b.len()),
                            expected: "the closing quote of a string without escapes",
                        });
                        return;
                    }
                    self.tokens.push((i, Token::Str(&self.text[start..j])));
                    i = j + 1;
                }
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    let start = i;
                    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                        i += 1;
                    }
                    self.tokens
                        .push((start, Token::Ident(&self.text[start..i])));
                }
                _ => {
                    self.tokens.push((i, Token::Other));
                    // Skip the rest of a number or operator; a multi-byte character whole.
                    i += 1;
                    while i < b.len() && !self.text.is_char_boundary(i) {
                        i += 1;
                    }
                }
            }
        }
    }

    fn peek(&self) -> Option<&Token<'a>> {
        self.tokens.get(self.pos).map(|(_, t)| t)
    }

    fn at(&self) -> usize {
        self.tokens
            .get(self.pos)
            .map_or(self.text.len(), |(at, _)| *at)
    }

    fn syntax(&self, expected: &'static str) -> ShardSelectorError {
        ShardSelectorError::Syntax {
            at: self.at(),
            expected,
        }
    }

    fn selector(mut self) -> Result<ShardSelector, ShardSelectorError> {
        if self.text.trim().is_empty() {
            return Err(ShardSelectorError::Empty);
        }
        if let Some(e) = self.lex_error.take() {
            return Err(e);
        }
        let mut ranges = Vec::new();
        self.expr(&mut ranges)?;
        if self.pos < self.tokens.len() {
            return Err(self.syntax("|| or the end of the selector"));
        }
        ShardSelector::new(ranges)
    }

    /// `term ('||' term)*`.
    fn expr(&mut self, out: &mut Vec<ShardRange>) -> Result<(), ShardSelectorError> {
        self.term(out)?;
        while self.peek() == Some(&Token::Or) {
            self.pos += 1;
            self.term(out)?;
        }
        Ok(())
    }

    /// `'(' expr ')'` or a `shardRange(...)` call.
    fn term(&mut self, out: &mut Vec<ShardRange>) -> Result<(), ShardSelectorError> {
        match self.peek() {
            Some(Token::Open) => {
                self.pos += 1;
                self.expr(out)?;
                if self.peek() != Some(&Token::Close) {
                    return Err(self.syntax(")"));
                }
                self.pos += 1;
                Ok(())
            }
            Some(Token::Ident(name)) => {
                let name = *name;
                if self.tokens.get(self.pos + 1).map(|(_, t)| t) != Some(&Token::Open) {
                    return Err(self.syntax("a shardRange(...) call"));
                }
                if name != "shardRange" {
                    return Err(ShardSelectorError::UnsupportedFunction(name.to_owned()));
                }
                self.pos += 2;
                let args = self.args()?;
                out.push(range_of(&args)?);
                Ok(())
            }
            _ => Err(self.syntax("a shardRange(...) call")),
        }
    }

    /// The arguments up to the closing parenthesis, each its tokens.
    fn args(&mut self) -> Result<Vec<Vec<Token<'a>>>, ShardSelectorError> {
        let mut args = vec![Vec::new()];
        let mut depth = 0usize;
        loop {
            let Some((_, t)) = self.tokens.get(self.pos).cloned() else {
                return Err(self.syntax(")"));
            };
            self.pos += 1;
            match t {
                Token::Close if depth == 0 => break,
                Token::Comma if depth == 0 => args.push(Vec::new()),
                t => {
                    match t {
                        Token::Open => depth += 1,
                        Token::Close => depth -= 1,
                        _ => {}
                    }
                    args.last_mut().expect("one argument at least").push(t);
                }
            }
        }
        if args.len() == 1 && args[0].is_empty() {
            args.clear();
        }
        if args.iter().any(Vec::is_empty) {
            return Err(ShardSelectorError::Syntax {
                at: self.at(),
                expected: "an argument between the commas",
            });
        }
        Ok(args)
    }
}

/// The range of a call's three arguments.
fn range_of(args: &[Vec<Token<'_>>]) -> Result<ShardRange, ShardSelectorError> {
    let [field, start, end] = args else {
        return Err(ShardSelectorError::Arity(args.len()));
    };
    let path = field_path(field).ok_or(ShardSelectorError::NotAFieldPath)?;
    let field =
        ShardField::from_path(&path).ok_or(ShardSelectorError::UnsupportedField(path.clone()))?;
    let start = bound(start, Bound::Start)?;
    let end = bound(end, Bound::End)?;
    // Both at most 2^64: a start below the end fits in 64 bits.
    if start >= end {
        return Err(ShardSelectorError::EmptyRange {
            start: bound_text(start),
            end: bound_text(end),
        });
    }
    ShardRange::new(field, start as u64, end)
}

/// `ident ('.' ident)*` as one dotted path.
fn field_path(tokens: &[Token<'_>]) -> Option<String> {
    let mut path = String::new();
    for (i, t) in tokens.iter().enumerate() {
        match (i % 2, t) {
            (0, Token::Ident(name)) => path.push_str(name),
            (1, Token::Dot) => path.push('.'),
            _ => return None,
        }
    }
    (tokens.len() % 2 == 1).then_some(path)
}

/// A bound's value: a string literal of `0x` and 16 lowercase hex digits, or 2^64.
fn bound(tokens: &[Token<'_>], which: Bound) -> Result<u128, ShardSelectorError> {
    let [Token::Str(value)] = tokens else {
        return Err(ShardSelectorError::NotAString(which));
    };
    let owned = || value.to_string();
    let Some(digits) = value.strip_prefix("0x") else {
        return Err(ShardSelectorError::MissingPrefix {
            bound: which,
            value: owned(),
        });
    };
    if let Some(found) = digits.chars().find(|c| !matches!(c, '0'..='9' | 'a'..='f')) {
        return Err(ShardSelectorError::BadDigit {
            bound: which,
            value: owned(),
            found,
        });
    }
    if digits.len() == 17 && digits == "10000000000000000" {
        return Ok(HASH_SPACE_END);
    }
    if digits.len() != 16 {
        return Err(ShardSelectorError::Width {
            bound: which,
            value: owned(),
            suggestion: (!digits.is_empty() && digits.len() < 16)
                .then(|| format!("0x{digits:0>16}")),
        });
    }
    Ok(u128::from_str_radix(digits, 16).expect("16 hex digits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALF: &str =
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";
    const UPPER: &str =
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')";

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        // The FNV reference values (Go's hash/fnv New64a gives the same).
        assert_eq!(fnv1a64(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(*b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(*b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn display_is_the_canonical_text_and_parses_back() {
        let s = ShardSelector::from(
            ShardRange::new(ShardField::Uid, 0, 0x8000_0000_0000_0000).unwrap(),
        );
        assert_eq!(s.to_string(), HALF);
        let two = s
            .clone()
            .or(ShardRange::new(ShardField::Uid, 0x8000_0000_0000_0000, HASH_SPACE_END).unwrap())
            .unwrap();
        assert_eq!(two.to_string(), format!("{HALF} || {UPPER}"));
        for text in [HALF.to_owned(), two.to_string()] {
            assert_eq!(ShardSelector::parse(&text).unwrap().to_string(), text);
        }
        let ns = ShardSelector::nth(ShardField::Namespace, 0, 2).unwrap();
        assert_eq!(
            ns.to_string(),
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"
        );
    }

    #[test]
    fn parse_accepts_what_the_server_accepts() {
        for text in [
            "shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')",
            "  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  ",
            "shardRange(object.metadata.uid, \"0x0000000000000000\", \"0x8000000000000000\")",
            "(shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000'))",
        ] {
            assert_eq!(
                ShardSelector::parse(text).unwrap().to_string(),
                HALF,
                "{text}"
            );
        }
        let three = ShardSelector::parse(
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000005') || \
             shardRange(object.metadata.uid, '0x0000000000000005', '0x000000000000000a') || \
             (shardRange(object.metadata.uid, '0x000000000000000a', '0x000000000000000f'))",
        )
        .unwrap();
        assert_eq!(three.ranges().len(), 3);
        assert_eq!(three.ranges()[2].start(), 10);
        assert_eq!(three.ranges()[2].end(), 15);
    }

    #[test]
    fn parse_names_the_bad_part() {
        use ShardSelectorError as E;
        let err = |t: &str| ShardSelector::parse(t).unwrap_err();
        assert_eq!(err(""), E::Empty);
        assert_eq!(err("  "), E::Empty);
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')"),
            E::MissingPrefix {
                bound: Bound::Start,
                ..
            }
        ));
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')"),
            E::MissingPrefix {
                bound: Bound::End,
                ..
            }
        ));
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x', '0x8000000000000000')"),
            E::Width {
                bound: Bound::Start,
                suggestion: None,
                ..
            }
        ));
        assert_eq!(
            err("shardRange(object.metadata.name, '0x00', '0x80')"),
            E::UnsupportedField("object.metadata.name".into())
        );
        assert_eq!(
            err("invalidFunc(object.metadata.uid, '0x00', '0x80')"),
            E::UnsupportedFunction("invalidFunc".into())
        );
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x000000000000000000', '0x80')"),
            E::Width {
                bound: Bound::Start,
                ..
            }
        ));
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x0g', '0x80')"),
            E::BadDigit { found: 'g', .. }
        ));
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x000000000000000A', '0x8000000000000000')"),
            E::BadDigit { found: 'A', .. }
        ));
        assert!(matches!(
            err(&format!("{HALF} && {UPPER}")),
            E::Syntax { at: 76, .. }
        ));
        assert_eq!(
            err("shardRange(object.metadata.uid, 0, 8)"),
            E::NotAString(Bound::Start)
        );
        assert!(matches!(
            err("object.metadata.uid > '0x0'"),
            E::Syntax { at: 0, .. }
        ));
        assert_eq!(err("shardRange(object.metadata.uid, '0x0')"), E::Arity(2));
        assert_eq!(
            err("shardRange(object.metadata.uid, hex(0), '0x8')"),
            E::NotAString(Bound::Start)
        );
        assert_eq!(
            err(&format!(
                "{HALF} || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"
            )),
            E::MixedFields {
                first: ShardField::Uid,
                other: ShardField::Namespace
            }
        );
        assert_eq!(
            err("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"),
            E::Width {
                bound: Bound::Start,
                value: "0x0".into(),
                suggestion: Some("0x0000000000000000".into())
            }
        );
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')"),
            E::EmptyRange { .. }
        ));
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')"),
            E::EmptyRange { .. }
        ));
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x10000000000000000', '0x10000000000000000')"),
            E::EmptyRange { .. }
        ));
        assert!(matches!(
            err("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000"),
            E::Syntax { .. }
        ));
        assert!(matches!(err(&format!("{HALF} ||")), E::Syntax { .. }));
        assert!(matches!(err(&format!("{HALF})")), E::Syntax { .. }));
        // The message names the bound and the fix.
        assert_eq!(
            err("shardRange(object.metadata.uid, '0x0000000000000000', '0xff')").to_string(),
            "the end \"0xff\" must have exactly 16 hex digits after 0x (or be \
             0x10000000000000000); did you mean \"0x00000000000000ff\"?"
        );
    }

    proptest::proptest! {
        /// Any selector prints as text that parses back to it, with or without the spaces
        /// and with either quote; and a value is matched by the ranges its hash falls in.
        #[test]
        fn display_parses_back(
            namespace in proptest::bool::ANY,
            bounds in proptest::collection::vec((proptest::num::u64::ANY, 1u128..=HASH_SPACE_END), 1..4),
            compact in proptest::bool::ANY,
            value in "[a-z0-9-]{0,40}",
        ) {
            let field = if namespace { ShardField::Namespace } else { ShardField::Uid };
            let ranges: Vec<ShardRange> = bounds
                .into_iter()
                .map(|(a, b)| {
                    let (lo, hi) = (u128::from(a).min(b - 1), u128::from(a).max(b - 1) + 1);
                    ShardRange::new(field, lo as u64, hi).unwrap()
                })
                .collect();
            let s = ShardSelector::new(ranges).unwrap();
            let text = s.to_string();
            let text = if compact { text.replace(", ", ",").replace(" || ", "||").replace('\'', "\"") } else { text };
            let back = ShardSelector::parse(&text).unwrap();
            proptest::prop_assert_eq!(&back, &s);
            let h = fnv1a64(value.bytes());
            let inside = s.ranges().iter().any(|r| u128::from(h) >= u128::from(r.start()) && u128::from(h) < r.end());
            proptest::prop_assert_eq!(s.matches_value(&value), inside);
        }
    }

    #[test]
    fn ranges_are_half_open_and_nth_covers_the_space() {
        let r = ShardRange::new(ShardField::Uid, 10, 20).unwrap();
        assert!(!r.contains(9) && r.contains(10) && r.contains(19) && !r.contains(20));
        let last = ShardRange::new(ShardField::Uid, u64::MAX, HASH_SPACE_END).unwrap();
        assert!(last.contains(u64::MAX));
        for count in [1u64, 2, 3, 7] {
            let shards: Vec<_> = (0..count)
                .map(|i| ShardRange::nth(ShardField::Uid, i, count).unwrap())
                .collect();
            assert_eq!(shards[0].start(), 0);
            assert_eq!(shards.last().unwrap().end(), HASH_SPACE_END);
            for w in shards.windows(2) {
                assert_eq!(u128::from(w[1].start()), w[0].end());
            }
        }
        assert_eq!(
            ShardRange::nth(ShardField::Uid, 2, 2),
            Err(ShardSelectorError::NoSuchShard { index: 2, count: 2 })
        );
        assert!(ShardRange::nth(ShardField::Uid, 0, 0).is_err());
    }

    #[test]
    fn matches_hashes_the_field() {
        let uid = "0f9e1c3a-5b7d-4e2f-8a6c-1d3b5f7a9c0e";
        let hash = fnv1a64(uid.bytes());
        let meta = ObjectMeta {
            uid: Some(uid.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        };
        for count in [2u64, 4, 16] {
            let hits: Vec<u64> = (0..count)
                .filter(|i| {
                    ShardSelector::nth(ShardField::Uid, *i, count)
                        .unwrap()
                        .matches(&meta)
                })
                .collect();
            assert_eq!(hits.len(), 1, "exactly one of {count} shards");
            let r = ShardRange::nth(ShardField::Uid, hits[0], count).unwrap();
            assert!(r.contains(hash));
        }
        let ns_hash = fnv1a64(*b"default");
        let ns = ShardSelector::from(
            ShardRange::new(ShardField::Namespace, ns_hash, u128::from(ns_hash) + 1).unwrap(),
        );
        assert!(ns.matches(&meta));
        assert!(!ns.matches(&ObjectMeta::default()));
    }
}
