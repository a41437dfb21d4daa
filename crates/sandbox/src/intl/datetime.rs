//! `Intl.DateTimeFormat` and `Date.prototype.toLocale*String`: option resolution as V8 does it
//! (skeleton from the options, hour cycles, `dateStyle`/`timeStyle`), ICU's
//! DateTimePatternGenerator (best match among the locale's available formats, field-length
//! adjustment, date and time glued by month width, append items) over CLDR data, and the
//! pattern formatter with IANA time zones (offsets from chrono-tz, names from CLDR metazones).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use boa_engine::{Context, JsNativeError, JsResult, JsString, JsValue};
use chrono::{Offset, TimeZone};
use chrono_tz::{OffsetComponents, Tz};

use super::Part;
use super::data;
use super::locale::{Locale, canonicalize_list, unsupported};
use super::number::push_literal;
use super::options::Options;
use super::shape::DateData;

const SERVICE: &str = "Intl.DateTimeFormat";

/// Which fields a `toLocale*String` needs (`required`) and which it fills in (`defaults`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Required {
    Date,
    Time,
    Any,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HourCycle {
    H11,
    H12,
    H23,
    H24,
}

impl HourCycle {
    fn from_name(s: &str) -> Option<Self> {
        match s {
            "h11" => Some(Self::H11),
            "h12" => Some(Self::H12),
            "h23" => Some(Self::H23),
            "h24" => Some(Self::H24),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::H11 => "h11",
            Self::H12 => "h12",
            Self::H23 => "h23",
            Self::H24 => "h24",
        }
    }

    fn char(self) -> char {
        match self {
            Self::H11 => 'K',
            Self::H12 => 'h',
            Self::H23 => 'H',
            Self::H24 => 'k',
        }
    }

    fn from_char(c: char) -> Option<Self> {
        match c {
            'K' => Some(Self::H11),
            'h' => Some(Self::H12),
            'H' => Some(Self::H23),
            'k' => Some(Self::H24),
            _ => None,
        }
    }
}

/// A time zone: its reported name and how to get offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Zone {
    /// What `resolvedOptions().timeZone` says (ICU's canonical id, "UTC").
    name: String,
    /// The CLDR id names are looked up by ("Etc/UTC" for UTC).
    cldr: String,
    tz: Tz,
}

impl Zone {
    fn utc() -> Self {
        Self { name: "UTC".into(), cldr: "Etc/UTC".into(), tz: Tz::UTC }
    }

    fn parse(input: &str) -> Option<Self> {
        let found = chrono_tz::TZ_VARIANTS.iter().find(|t| t.name().eq_ignore_ascii_case(input))?;
        let exact = found.name();
        let name = data::TZ_LINKS
            .binary_search_by(|(from, _)| (*from).cmp(exact))
            .map_or(exact, |i| data::TZ_LINKS[i].1);
        let tz: Tz = name.parse().unwrap_or(*found);
        let cldr = if name == "UTC" { "Etc/UTC" } else { name };
        Some(Self { name: name.to_owned(), cldr: cldr.to_owned(), tz })
    }

    /// (offset in seconds, daylight saving in effect) at `t` ms since the epoch.
    fn offset(&self, t: f64) -> (i32, bool) {
        #[allow(clippy::cast_possible_truncation)]
        let secs = (t / 1000.0).floor().clamp(-8_210_266_876_800.0, 8_210_266_876_799.0) as i64;
        let Some(utc) = chrono::DateTime::from_timestamp(secs, 0) else { return (0, false) };
        let off = self.tz.offset_from_utc_datetime(&utc.naive_utc());
        let dst = !off.dst_offset().is_zero();
        (off.fix().local_minus_utc(), dst)
    }
}

/// Calendar fields of a local time.
#[derive(Debug, Clone, Copy)]
struct Fields {
    year: i64,
    month: u32,
    day: u32,
    weekday: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millisecond: u32,
    offset: i32,
    dst: bool,
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, u32::try_from(m).unwrap_or(1), u32::try_from(d).unwrap_or(1))
}

impl Fields {
    fn at(t: f64, zone: &Zone) -> Self {
        let (offset, dst) = zone.offset(t);
        #[allow(clippy::cast_possible_truncation)]
        let local = t as i64 + i64::from(offset) * 1000;
        let days = local.div_euclid(86_400_000);
        let ms = local.rem_euclid(86_400_000);
        let (year, month, day) = civil_from_days(days);
        let weekday = u32::try_from((days + 4).rem_euclid(7)).unwrap_or(0);
        let ms = u32::try_from(ms).unwrap_or(0);
        Self {
            year,
            month,
            day,
            weekday,
            hour: ms / 3_600_000,
            minute: ms / 60_000 % 60,
            second: ms / 1000 % 60,
            millisecond: ms % 1000,
            offset,
            dst,
        }
    }
}

// ---- DateTimePatternGenerator (ICU's algorithm) ----

const DT_NUMERIC: i32 = 0x100;
const DT_DELTA: i32 = 0x10;
const DT_NARROW: i32 = -0x101;
const DT_SHORTER: i32 = -0x102;
const DT_SHORT: i32 = -0x103;
const DT_LONG: i32 = -0x104;
const EXTRA_FIELD: i32 = 0x10000;
const MISSING_FIELD: i32 = 0x1000;

const YEAR: usize = 1;
const MONTH: usize = 3;
const WEEKDAY: usize = 6;
const DAYPERIOD: usize = 10;
const HOUR: usize = 11;
const MINUTE: usize = 12;
const SECOND: usize = 13;
const FRACTIONAL: usize = 14;
const ZONE: usize = 15;
const FIELDS: usize = 16;
const DATE_MASK: u32 = (1 << DAYPERIOD) - 1;
const TIME_MASK: u32 = (1 << FIELDS) - 1 - DATE_MASK;

/// ICU's dtTypes: (pattern char, field, type, minimum length).
const DT_TYPES: &[(char, usize, i32, usize)] = &[
    ('G', 0, DT_SHORT, 1),
    ('G', 0, DT_LONG, 4),
    ('G', 0, DT_NARROW, 5),
    ('y', 1, DT_NUMERIC, 1),
    ('Y', 1, DT_NUMERIC + DT_DELTA, 1),
    ('u', 1, DT_NUMERIC + 2 * DT_DELTA, 1),
    ('r', 1, DT_NUMERIC + 3 * DT_DELTA, 1),
    ('U', 1, DT_SHORT, 1),
    ('U', 1, DT_LONG, 4),
    ('U', 1, DT_NARROW, 5),
    ('Q', 2, DT_NUMERIC, 1),
    ('Q', 2, DT_SHORT, 3),
    ('Q', 2, DT_LONG, 4),
    ('Q', 2, DT_NARROW, 5),
    ('q', 2, DT_NUMERIC + DT_DELTA, 1),
    ('q', 2, DT_SHORT - DT_DELTA, 3),
    ('q', 2, DT_LONG - DT_DELTA, 4),
    ('q', 2, DT_NARROW - DT_DELTA, 5),
    ('M', 3, DT_NUMERIC, 1),
    ('M', 3, DT_SHORT, 3),
    ('M', 3, DT_LONG, 4),
    ('M', 3, DT_NARROW, 5),
    ('L', 3, DT_NUMERIC + DT_DELTA, 1),
    ('L', 3, DT_SHORT - DT_DELTA, 3),
    ('L', 3, DT_LONG - DT_DELTA, 4),
    ('L', 3, DT_NARROW - DT_DELTA, 5),
    ('l', 3, DT_NUMERIC + DT_DELTA, 1),
    ('w', 4, DT_NUMERIC, 1),
    ('W', 5, DT_NUMERIC, 1),
    ('E', 6, DT_SHORT, 1),
    ('E', 6, DT_LONG, 4),
    ('E', 6, DT_NARROW, 5),
    ('E', 6, DT_SHORTER, 6),
    ('c', 6, DT_NUMERIC + 2 * DT_DELTA, 1),
    ('c', 6, DT_SHORT - 2 * DT_DELTA, 3),
    ('c', 6, DT_LONG - 2 * DT_DELTA, 4),
    ('c', 6, DT_NARROW - 2 * DT_DELTA, 5),
    ('c', 6, DT_SHORTER - 2 * DT_DELTA, 6),
    ('e', 6, DT_NUMERIC + DT_DELTA, 1),
    ('e', 6, DT_SHORT - DT_DELTA, 3),
    ('e', 6, DT_LONG - DT_DELTA, 4),
    ('e', 6, DT_NARROW - DT_DELTA, 5),
    ('e', 6, DT_SHORTER - DT_DELTA, 6),
    ('d', 9, DT_NUMERIC, 1),
    ('g', 9, DT_NUMERIC + DT_DELTA, 1),
    ('D', 7, DT_NUMERIC, 1),
    ('F', 8, DT_NUMERIC, 1),
    ('a', 10, DT_SHORT, 1),
    ('a', 10, DT_LONG, 4),
    ('a', 10, DT_NARROW, 5),
    ('b', 10, DT_SHORT - DT_DELTA, 1),
    ('b', 10, DT_LONG - DT_DELTA, 4),
    ('b', 10, DT_NARROW - DT_DELTA, 5),
    ('B', 10, DT_SHORT - 3 * DT_DELTA, 1),
    ('B', 10, DT_LONG - 3 * DT_DELTA, 4),
    ('B', 10, DT_NARROW - 3 * DT_DELTA, 5),
    ('H', 11, DT_NUMERIC + 10 * DT_DELTA, 1),
    ('k', 11, DT_NUMERIC + 11 * DT_DELTA, 1),
    ('h', 11, DT_NUMERIC, 1),
    ('K', 11, DT_NUMERIC + DT_DELTA, 1),
    ('J', 11, DT_NUMERIC + 5 * DT_DELTA, 1),
    ('j', 11, DT_NUMERIC + 6 * DT_DELTA, 1),
    ('C', 11, DT_NUMERIC + 7 * DT_DELTA, 1),
    ('m', 12, DT_NUMERIC, 1),
    ('s', 13, DT_NUMERIC, 1),
    ('A', 13, DT_NUMERIC + DT_DELTA, 1),
    ('S', 14, DT_NUMERIC, 1),
    ('v', 15, DT_SHORT - 2 * DT_DELTA, 1),
    ('v', 15, DT_LONG - 2 * DT_DELTA, 4),
    ('z', 15, DT_SHORT, 1),
    ('z', 15, DT_LONG, 4),
    ('Z', 15, DT_NARROW - DT_DELTA, 1),
    ('Z', 15, DT_LONG - DT_DELTA, 4),
    ('Z', 15, DT_SHORT - DT_DELTA, 5),
    ('O', 15, DT_SHORT - DT_DELTA, 1),
    ('O', 15, DT_LONG - DT_DELTA, 4),
    ('V', 15, DT_SHORT - DT_DELTA, 1),
    ('V', 15, DT_LONG - DT_DELTA, 2),
    ('V', 15, DT_LONG - 1 - DT_DELTA, 3),
    ('V', 15, DT_LONG - 2 - DT_DELTA, 4),
    ('X', 15, DT_NARROW - DT_DELTA, 1),
    ('X', 15, DT_SHORT - DT_DELTA, 2),
    ('X', 15, DT_LONG - DT_DELTA, 4),
    ('x', 15, DT_NARROW - DT_DELTA, 1),
    ('x', 15, DT_SHORT - DT_DELTA, 2),
    ('x', 15, DT_LONG - DT_DELTA, 4),
];

/// `getCanonicalIndex` (non-strict).
fn canonical_index(ch: char, len: usize) -> Option<usize> {
    let mut best = None;
    for (i, row) in DT_TYPES.iter().enumerate() {
        if row.0 != ch {
            continue;
        }
        if row.3 <= len || best.is_none() {
            best = Some(i);
        }
    }
    best
}

/// An item of a pattern: a field (char, length) or literal text (quotes kept as written).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Field(char, usize),
    Quoted(String),
    Literal(char),
}

fn items(pattern: &str) -> Vec<Item> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            let start = i;
            i += 1;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '\'' {
                    if i + 1 < chars.len() && chars[i + 1] == '\'' {
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                i += 1;
            }
            out.push(Item::Quoted(chars[start..i].iter().collect()));
            continue;
        }
        if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i] == c {
                i += 1;
            }
            out.push(Item::Field(c, i - start));
            continue;
        }
        out.push(Item::Literal(c));
        i += 1;
    }
    out
}

/// A skeleton: per field the original (char, length), the canonical base, and the type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Skeleton {
    original: [Option<(char, usize)>; FIELDS],
    base: [Option<(char, usize)>; FIELDS],
    ty: [i32; FIELDS],
}

impl Skeleton {
    /// `DateTimeMatcher::set`.
    fn from_pattern(pattern: &str) -> Self {
        let mut s = Self::from_pattern_no_defaults(pattern);
        // Minutes with fractional seconds but no seconds: force seconds.
        if s.original[FRACTIONAL].is_some()
            && s.original[MINUTE].is_some()
            && s.original[SECOND].is_none()
        {
            s.original[SECOND] = Some(('s', 1));
            s.base[SECOND] = Some(('s', 1));
            s.ty[SECOND] = DT_NUMERIC + 1;
        }
        if let Some((hc, _)) = s.original[HOUR] {
            if hc == 'h' || hc == 'K' {
                if s.original[DAYPERIOD].is_none() {
                    s.original[DAYPERIOD] = Some(('a', 1));
                    s.base[DAYPERIOD] = Some(('a', 1));
                    s.ty[DAYPERIOD] = DT_SHORT;
                }
            } else if s.original[DAYPERIOD].is_some() {
                s.original[DAYPERIOD] = None;
                s.base[DAYPERIOD] = None;
                s.ty[DAYPERIOD] = 0;
            }
        }
        s
    }

    fn mask(&self) -> u32 {
        (0..FIELDS).filter(|f| self.ty[*f] != 0).fold(0, |m, f| m | (1 << f))
    }

    fn base_string(&self) -> String {
        let mut s = String::new();
        for (ch, len) in self.base.iter().flatten() {
            s.extend(std::iter::repeat_n(*ch, *len));
        }
        s
    }

    fn first_char(&self) -> char {
        self.base.iter().flatten().next().map_or('\0', |(c, _)| *c)
    }

    /// `getDistance`: (distance, missing mask, extra mask).
    fn distance(&self, other: &Self, include: u32) -> (i32, u32, u32) {
        let mut result = 0;
        let (mut missing, mut extra) = (0, 0);
        for i in 0..FIELDS {
            let mine = if include & (1 << i) == 0 { 0 } else { self.ty[i] };
            let theirs = other.ty[i];
            if mine == theirs {
                continue;
            }
            if mine == 0 {
                result += EXTRA_FIELD;
                extra |= 1 << i;
            } else if theirs == 0 {
                result += MISSING_FIELD;
                missing |= 1 << i;
            } else {
                result += (mine - theirs).abs();
            }
        }
        (result, missing, extra)
    }
}

struct Entry {
    skeleton: Skeleton,
    base: String,
    pattern: String,
    specified: bool,
}

/// A locale's pattern generator.
struct Generator {
    /// Buckets by the first char of the base skeleton, in ICU's order (A–Z, a–z).
    buckets: Vec<Vec<Entry>>,
    default_hour: char,
    data: &'static DateData,
}

fn bucket_of(c: char) -> usize {
    if c.is_ascii_lowercase() {
        26 + (c as usize - 'a' as usize)
    } else if c.is_ascii_uppercase() {
        c as usize - 'A' as usize
    } else {
        52
    }
}

impl Generator {
    fn new(data: &'static DateData) -> Self {
        let short_time = data.time_formats[3];
        let default_hour = items(short_time)
            .into_iter()
            .find_map(|i| match i {
                Item::Field(c, _) if matches!(c, 'h' | 'H' | 'k' | 'K') => Some(c),
                _ => None,
            })
            .unwrap_or('h');
        let mut g = Self { buckets: (0..53).map(|_| Vec::new()).collect(), default_hour, data };
        for c in "GyQMwWEDFdaHmsSv".chars() {
            g.add(&c.to_string(), None, false);
        }
        for i in 0..4 {
            g.add(data.date_formats[i], None, false);
            g.add(data.time_formats[i], None, false);
        }
        g.hack_times(data.time_formats[2]);
        for (skeleton, pattern) in data.available {
            g.add(pattern, Some(skeleton), true);
        }
        g
    }

    fn hack_times(&mut self, pattern: &str) {
        let mut mmss = String::new();
        let mut got_mm = false;
        for item in items(pattern) {
            match item {
                Item::Quoted(q) => {
                    if got_mm {
                        mmss.push_str(&q);
                    }
                }
                Item::Literal(c) => {
                    if got_mm && "'.:-,;\\/ ".contains(c) {
                        mmss.push(c);
                    }
                }
                Item::Field(c, len) => {
                    if c == 'm' {
                        got_mm = true;
                        mmss.extend(std::iter::repeat_n(c, len));
                    } else if c == 's' {
                        if got_mm {
                            mmss.extend(std::iter::repeat_n(c, len));
                            self.add(&mmss, None, false);
                        }
                        break;
                    } else if got_mm || matches!(c, 'z' | 'Z' | 'v' | 'V') {
                        break;
                    }
                }
            }
        }
    }

    /// `addPatternWithSkeleton`.
    fn add(&mut self, pattern: &str, skeleton: Option<&str>, override_: bool) {
        let sk = Skeleton::from_pattern(skeleton.unwrap_or(pattern));
        let base = sk.base_string();
        let bucket = bucket_of(sk.first_char());
        if let Some(dup) = self.buckets[bucket].iter().find(|e| e.base == base)
            && (!dup.specified || (skeleton.is_some() && !override_))
            && !override_
        {
            return;
        }
        if let Some(dup) = self.buckets[bucket].iter().find(|e| e.skeleton.original == sk.original)
            && (!override_ || (skeleton.is_some() && dup.specified))
        {
            return;
        }
        let specified = skeleton.is_some();
        if let Some(e) =
            self.buckets[bucket].iter_mut().find(|e| e.base == base && e.skeleton.ty == sk.ty)
        {
            e.pattern = pattern.to_owned();
            e.specified = specified;
            return;
        }
        self.buckets[bucket].push(Entry {
            skeleton: sk,
            base,
            pattern: pattern.to_owned(),
            specified,
        });
    }

    /// `getBestRaw`: the best entry for `request` restricted to `include`.
    fn best_raw(&self, request: &Skeleton, include: u32) -> (&Entry, u32) {
        let mut best: Option<(&Entry, i32, u32)> = None;
        let mut best_missing: i64 = -1;
        'outer: for bucket in &self.buckets {
            for e in bucket {
                let (d, missing, _) = request.distance(&e.skeleton, include);
                let better = match best {
                    None => true,
                    Some((_, bd, _)) => d < bd || (d == bd && best_missing < i64::from(missing)),
                };
                if better {
                    // The pattern is looked up by the entry's skeleton: the first with it.
                    let first = self.buckets[bucket_of(e.skeleton.first_char())]
                        .iter()
                        .find(|x| x.skeleton.original == e.skeleton.original)
                        .unwrap_or(e);
                    best = Some((first, d, missing));
                    best_missing = i64::from(missing);
                    if d == 0 {
                        break 'outer;
                    }
                }
            }
        }
        let (e, _, missing) = best.expect("canonical items are always present");
        (e, missing)
    }

    /// `adjustFieldTypes`.
    fn adjust(
        &self,
        pattern: &str,
        specified: Option<&Skeleton>,
        request: &Skeleton,
        fix_fraction: bool,
    ) -> String {
        let mut out = String::new();
        for item in items(pattern) {
            match item {
                Item::Quoted(q) => out.push_str(&q),
                Item::Literal(c) => out.push(c),
                Item::Field(ch, len) => {
                    let Some(index) = canonical_index(ch, len) else {
                        out.extend(std::iter::repeat_n(ch, len));
                        continue;
                    };
                    let (_, field, row_ty, _) = DT_TYPES[index];
                    if fix_fraction && field == SECOND {
                        out.extend(std::iter::repeat_n(ch, len));
                        out.push_str(self.decimal());
                        if let Some((c, l)) = request.original[FRACTIONAL] {
                            out.extend(std::iter::repeat_n(c, l));
                        }
                        continue;
                    }
                    if request.ty[field] == 0 {
                        out.extend(std::iter::repeat_n(ch, len));
                        continue;
                    }
                    let (req_char, mut req_len) = request.original[field].unwrap_or((ch, len));
                    if req_char == 'E' && req_len < 3 {
                        req_len = 3;
                    }
                    let mut adj_len = req_len;
                    if field == MINUTE || field == SECOND {
                        adj_len = len;
                    } else if let Some(spec) = specified
                        && req_char != 'c'
                        && req_char != 'e'
                    {
                        let skel_len = spec.original[field].map_or(0, |(_, l)| l);
                        let pat_numeric = row_ty > 0;
                        let skel_numeric = spec.ty[field] > 0;
                        if skel_len == req_len || pat_numeric != skel_numeric {
                            adj_len = len;
                        }
                    }
                    let mut c = if field != HOUR
                        && field != MONTH
                        && field != WEEKDAY
                        && (field != YEAR || req_char == 'Y')
                    {
                        req_char
                    } else {
                        ch
                    };
                    if field == HOUR {
                        let d = self.default_hour;
                        if req_char == d {
                            c = d;
                        } else if req_char == 'h' && d == 'K' {
                            c = 'K';
                        } else if req_char == 'H' && d == 'k' {
                            c = 'k';
                        } else if req_char == 'k' && d == 'H' {
                            c = 'H';
                        } else if req_char == 'K' && d == 'h' {
                            c = 'h';
                        }
                    }
                    out.extend(std::iter::repeat_n(c, adj_len));
                }
            }
        }
        out
    }

    fn decimal(&self) -> &'static str {
        if std::ptr::eq(self.data, &data::DATE_DE) || std::ptr::eq(self.data, &data::DATE_FR) {
            ","
        } else {
            "."
        }
    }

    /// `getBestPattern` (with `UDATPG_MATCH_HOUR_FIELD_LENGTH`).
    fn best_pattern(&self, skeleton: &str) -> String {
        let mapped = self.map_metacharacters(skeleton);
        let request = Skeleton::from_pattern(&mapped);
        let (entry, _) = self.best_raw(&request, u32::MAX);
        let (_, missing, extra) = request.distance(&entry.skeleton, u32::MAX);
        if missing == 0 && extra == 0 {
            let spec = entry.specified.then_some(&entry.skeleton);
            return self.adjust(&entry.pattern, spec, &request, false);
        }
        let needed = request.mask();
        let date = self.best_appending(&request, needed & DATE_MASK);
        let time = self.best_appending(&request, needed & TIME_MASK);
        if date.is_empty() {
            return time;
        }
        if time.is_empty() {
            return date;
        }
        let month_len = request.base[MONTH].map_or(0, |(_, l)| l);
        let style = if month_len == 4 {
            if request.base[WEEKDAY].is_some() { 0 } else { 1 }
        } else if month_len == 3 {
            2
        } else {
            3
        };
        glue(self.data, style, &date, &time)
    }

    fn map_metacharacters(&self, skeleton: &str) -> String {
        let mut out = String::new();
        for item in items(skeleton) {
            match item {
                Item::Field('j', len) => {
                    let extra = len - 1;
                    let hour_len = 1 + (extra & 1);
                    let period_len = if extra < 2 { 1 } else { 3 + (extra >> 1) };
                    let hour = self.default_hour;
                    if hour != 'H' && hour != 'k' {
                        out.extend(std::iter::repeat_n('a', period_len));
                    }
                    out.extend(std::iter::repeat_n(hour, hour_len));
                }
                Item::Field(c, len) => out.extend(std::iter::repeat_n(c, len)),
                Item::Quoted(q) => out.push_str(&q),
                Item::Literal(c) => out.push(c),
            }
        }
        out
    }

    /// `getBestAppending`.
    fn best_appending(&self, request: &Skeleton, fields: u32) -> String {
        if fields == 0 {
            return String::new();
        }
        let (entry, _) = self.best_raw(request, fields);
        let (_, mut missing, _) = request.distance(&entry.skeleton, fields);
        let mut spec = entry.specified.then(|| entry.skeleton.clone());
        let mut result = self.adjust(&entry.pattern, spec.as_ref(), request, false);
        let last_missing = 0;
        const SECOND_AND_FRACTIONAL: u32 = (1 << SECOND) | (1 << FRACTIONAL);
        while missing != 0 {
            if missing == last_missing {
                break;
            }
            if missing & SECOND_AND_FRACTIONAL == 1 << FRACTIONAL
                && fields & SECOND_AND_FRACTIONAL == SECOND_AND_FRACTIONAL
            {
                result = self.adjust(&result, spec.as_ref(), request, true);
                missing &= !(1 << FRACTIONAL);
                continue;
            }
            let starting = missing;
            let (entry, _) = self.best_raw(request, missing);
            let (_, now_missing, _) = request.distance(&entry.skeleton, starting);
            spec = entry.specified.then(|| entry.skeleton.clone());
            let temp = self.adjust(&entry.pattern, spec.as_ref(), request, false);
            let found = starting & !now_missing;
            let top =
                if found == 0 { 0 } else { (31 - found.leading_zeros()).min(ZONE as u32) as usize };
            let append = append_item(self.data, top);
            if !append.is_empty() {
                let name = format!("'{}'", field_name(self.data, top));
                result = append.replace("{0}", &result).replace("{1}", &temp).replace("{2}", &name);
            }
            // ICU compares the mask with itself here, so only one missing group is ever
            // appended (V8 drops the rest).
            let _ = (last_missing, now_missing);
            break;
        }
        result
    }
}

/// The CLDR append item and field name index of a DTPG field, if CLDR has one.
fn cldr_field(field: usize) -> Option<usize> {
    match field {
        0..=3 => Some(field),
        4 => Some(4),
        6 => Some(5),
        9 => Some(6),
        11 => Some(7),
        12 => Some(8),
        13 => Some(9),
        15 => Some(10),
        _ => None,
    }
}

fn append_item(data: &DateData, field: usize) -> &'static str {
    cldr_field(field).map_or("{0} \u{251c}{2}: {1}\u{2524}", |i| data.append_items[i])
}

fn field_name(data: &DateData, field: usize) -> String {
    match (field, cldr_field(field)) {
        (_, Some(i)) => data.field_names[i].to_owned(),
        (DAYPERIOD, None) => data.field_names[11].to_owned(),
        (f, None) => format!("F{f}"),
    }
}

fn glue(data: &DateData, style: usize, date: &str, time: &str) -> String {
    let pattern = data.date_time_at_formats[style];
    let pattern = if pattern.is_empty() { data.date_time_formats[style] } else { pattern };
    pattern.replace("{1}", date).replace("{0}", time)
}

thread_local! {
    static GENERATORS: RefCell<HashMap<usize, Rc<Generator>>> = RefCell::new(HashMap::new());
}

fn generator(data: &'static DateData) -> Rc<Generator> {
    let key = std::ptr::from_ref(data) as usize;
    GENERATORS.with(|g| {
        g.borrow_mut().entry(key).or_insert_with(|| Rc::new(Generator::new(data))).clone()
    })
}

/// V8's `ReplaceHourCycleInPattern`.
fn replace_hour_cycle(pattern: &str, hc: Option<HourCycle>) -> String {
    let Some(hc) = hc else { return pattern.to_owned() };
    let mut out = String::new();
    let mut replace = true;
    for c in pattern.chars() {
        match c {
            '\'' => {
                replace = !replace;
                out.push(c);
            }
            'H' | 'h' | 'K' | 'k' if replace => out.push(hc.char()),
            _ => out.push(c),
        }
    }
    out
}

/// V8's `ReplaceSkeleton`: the hour chars of a style pattern's skeleton set to `hc`, day
/// periods dropped.
fn replace_skeleton(skeleton: &str, hc: HourCycle) -> String {
    skeleton
        .chars()
        .filter(|c| !matches!(c, 'a' | 'b' | 'B'))
        .map(|c| if matches!(c, 'h' | 'H' | 'K' | 'k') { hc.char() } else { c })
        .collect()
}

/// `staticGetSkeleton`: the fields of a pattern in canonical order.
fn skeleton_of_pattern(pattern: &str) -> String {
    let s = Skeleton::from_pattern_no_defaults(pattern);
    let mut out = String::new();
    for (ch, len) in s.original.iter().flatten() {
        out.extend(std::iter::repeat_n(*ch, *len));
    }
    out
}

impl Skeleton {
    /// The pattern's fields as they are, without the implied seconds and day period.
    fn from_pattern_no_defaults(pattern: &str) -> Self {
        let mut s = Self::default();
        for item in items(pattern) {
            let Item::Field(ch, len) = item else { continue };
            let Some(index) = canonical_index(ch, len) else { continue };
            let (row_ch, field, ty, min_len) = DT_TYPES[index];
            s.original[field] = Some((ch, len));
            s.base[field] = Some((row_ch, min_len));
            s.ty[field] = if ty > 0 { ty + i32::try_from(len).unwrap_or(0) } else { ty };
        }
        s
    }
}

fn hour_cycle_of(pattern: &str) -> Option<HourCycle> {
    items(pattern).into_iter().find_map(|i| match i {
        Item::Field(c, _) => HourCycle::from_char(c),
        _ => None,
    })
}

// ---- the formatter ----

const STYLES: [&str; 4] = ["full", "long", "medium", "short"];

/// A resolved `Intl.DateTimeFormat`.
#[derive(Debug, Clone)]
pub(super) struct DateTimeFormat {
    locale: Locale,
    locale_str: String,
    zone: Zone,
    pattern: String,
    date_style: Option<usize>,
    time_style: Option<usize>,
}

impl DateTimeFormat {
    /// `CreateDateTimeFormat`.
    pub fn new(
        locales: &JsValue,
        options: &JsValue,
        required: Required,
        defaults: Required,
        ctx: &mut Context,
    ) -> JsResult<Self> {
        let requested = canonicalize_list(locales, ctx)?;
        let opts = Options::coerce(options, SERVICE, ctx)?;
        opts.string_or("localeMatcher", &["lookup", "best fit"], "best fit", ctx)?;
        let calendar = opts.string("calendar", &[], ctx)?;
        let nu = opts.string("numberingSystem", &[], ctx)?;
        let hour12 = opts.boolean("hour12", ctx)?;
        let mut hour_cycle = opts.string("hourCycle", &["h11", "h12", "h23", "h24"], ctx)?;
        if hour12.is_some() {
            hour_cycle = None;
        }
        let tz = opts.get("timeZone", ctx)?;
        let zone = if tz.is_undefined() {
            Zone::utc()
        } else {
            let name = tz.to_string(ctx)?.to_std_string_escaped();
            Zone::parse(&name).ok_or_else(|| {
                JsNativeError::range().with_message(format!("Invalid time zone specified: {name}"))
            })?
        };
        // The component options, in the order of the spec's table.
        const TABLE: [(&str, &[&str]); 10] = [
            ("weekday", &["narrow", "short", "long"]),
            ("era", &["narrow", "short", "long"]),
            ("year", &["2-digit", "numeric"]),
            ("month", &["2-digit", "numeric", "narrow", "short", "long"]),
            ("day", &["2-digit", "numeric"]),
            ("dayPeriod", &["narrow", "short", "long"]),
            ("hour", &["2-digit", "numeric"]),
            ("minute", &["2-digit", "numeric"]),
            ("second", &["2-digit", "numeric"]),
            (
                "timeZoneName",
                &["short", "long", "shortOffset", "longOffset", "shortGeneric", "longGeneric"],
            ),
        ];
        let mut values: Vec<Option<String>> = Vec::new();
        let mut fsd = None;
        for (name, allowed) in TABLE {
            if name == "timeZoneName" {
                fsd = opts.number("fractionalSecondDigits", 1, 3, ctx)?;
            }
            values.push(opts.string(name, allowed, ctx)?);
        }
        opts.string_or("formatMatcher", &["basic", "best fit"], "best fit", ctx)?;
        let date_style = opts.string("dateStyle", &STYLES, ctx)?;
        let time_style = opts.string("timeStyle", &STYLES, ctx)?;

        let locale = Locale::resolve(&requested)?;
        // Calendar and numbering system: only gregory and latn.
        let mut keep = Vec::new();
        let ca_ext = locale.keyword("ca").map(str::to_owned);
        match (&calendar, &ca_ext) {
            (Some(c), _) => {
                if !(3..=8).contains(&c.len())
                    || !c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                {
                    return Err(JsNativeError::range()
                        .with_message(format!("Invalid calendar : {c}"))
                        .into());
                }
                if c != "gregory" {
                    return Err(unsupported(format!("calendar '{c}'")).into());
                }
                if ca_ext.as_deref() == Some(c.as_str()) {
                    keep.push(format!("ca-{c}"));
                }
            }
            (None, Some(c)) => {
                if c != "gregory" {
                    return Err(unsupported(format!("calendar '{c}' (-u-ca-{c})")).into());
                }
                keep.push("ca-gregory".into());
            }
            (None, None) => {}
        }
        if super::number::check_numbering(nu.as_deref(), &locale)? {
            keep.push("nu-latn".into());
        }
        let hc_ext = locale.keyword("hc").and_then(HourCycle::from_name);
        let data = locale.date_data();
        let dtpg = generator(data);
        let hc_default = HourCycle::from_char(dtpg.default_hour).unwrap_or(HourCycle::H12);
        let mut hc = hour_cycle.as_deref().and_then(HourCycle::from_name);
        if hc.is_none() && hour12.is_none() {
            hc = hc_ext;
        }
        if let Some(h12) = hour12 {
            let default_is_0 = matches!(hc_default, HourCycle::H11 | HourCycle::H23);
            hc = Some(match (h12, default_is_0) {
                (true, true) => HourCycle::H11,
                (true, false) => HourCycle::H12,
                (false, true) => HourCycle::H23,
                (false, false) => HourCycle::H24,
            });
        }
        if hc_ext.is_some() && hc == hc_ext && hour12.is_none() {
            keep.push(format!("hc-{}", hc_ext.map_or("", HourCycle::name)));
        }
        keep.sort();
        let locale_str = if keep.is_empty() {
            locale.base.clone()
        } else {
            format!("{}-u-{}", locale.base, keep.join("-"))
        };

        let explicit = values
            .iter()
            .position(Option::is_some)
            .map(|i| TABLE[i].0)
            .or(fsd.map(|_| "fractionalSecondDigits"));
        let (pattern, ds, ts) = if date_style.is_some() || time_style.is_some() {
            if let Some(name) = explicit {
                let which = if date_style.is_some() { "dateStyle" } else { "timeStyle" };
                return Err(JsNativeError::typ()
                    .with_message(format!("Can't set option {name} when {which} is used"))
                    .into());
            }
            if required == Required::Date && time_style.is_some() {
                return Err(JsNativeError::typ().with_message("Invalid option : timeStyle").into());
            }
            if required == Required::Time && date_style.is_some() {
                return Err(JsNativeError::typ().with_message("Invalid option : dateStyle").into());
            }
            let ds = date_style.as_deref().and_then(|s| STYLES.iter().position(|x| *x == s));
            let ts = time_style.as_deref().and_then(|s| STYLES.iter().position(|x| *x == s));
            let mut pattern = match (ds, ts) {
                (Some(d), Some(t)) => glue(data, d, data.date_formats[d], data.time_formats[t]),
                (Some(d), None) => data.date_formats[d].to_owned(),
                (None, Some(t)) => data.time_formats[t].to_owned(),
                (None, None) => unreachable!("one style is set"),
            };
            if ts.is_some() {
                let wanted = hc.unwrap_or(hc_default);
                if hour_cycle_of(&pattern) != Some(wanted) {
                    let skeleton = replace_skeleton(&skeleton_of_pattern(&pattern), wanted);
                    pattern = replace_hour_cycle(&dtpg.best_pattern(&skeleton), Some(wanted));
                }
            }
            (pattern, ds, ts)
        } else {
            let mut values = values;
            let need_date = matches!(required, Required::Date | Required::Any);
            let need_time = matches!(required, Required::Time | Required::Any);
            let mut need_defaults = true;
            if need_date && [0usize, 2, 3, 4].iter().any(|i| values[*i].is_some()) {
                need_defaults = false;
            }
            if need_time
                && ([5usize, 6, 7, 8].iter().any(|i| values[*i].is_some()) || fsd.is_some())
            {
                need_defaults = false;
            }
            if need_defaults && matches!(defaults, Required::Date | Required::All) {
                for i in [2, 3, 4] {
                    values[i] = Some("numeric".into());
                }
            }
            if need_defaults && matches!(defaults, Required::Time | Required::All) {
                for i in [6, 7, 8] {
                    values[i] = Some("numeric".into());
                }
            }
            let hour_char = hc.map_or('j', HourCycle::char);
            let mut skeleton = String::new();
            let mut day_period: Option<&str> = None;
            for (i, v) in values.iter().enumerate() {
                let Some(v) = v else {
                    if i == 9
                        && let Some(n) = fsd
                    {
                        skeleton.extend(std::iter::repeat_n('S', n as usize));
                    }
                    continue;
                };
                if i == 9
                    && let Some(n) = fsd
                {
                    skeleton.extend(std::iter::repeat_n('S', n as usize));
                }
                if i == 7
                    && let Some(b) = day_period.take()
                {
                    skeleton.push_str(b);
                }
                let s = match (TABLE[i].0, v.as_str()) {
                    ("weekday", "narrow") => "EEEEE",
                    ("weekday", "long") => "EEEE",
                    ("weekday", _) => "EEE",
                    ("era", "narrow") => "GGGGG",
                    ("era", "long") => "GGGG",
                    ("era", _) => "GGG",
                    ("year", "2-digit") => "yy",
                    ("year", _) => "y",
                    ("month", "narrow") => "MMMMM",
                    ("month", "long") => "MMMM",
                    ("month", "short") => "MMM",
                    ("month", "2-digit") => "MM",
                    ("month", _) => "M",
                    ("day", "2-digit") => "dd",
                    ("day", _) => "d",
                    // After the hour: ICU lets the later day period win over the `a` that
                    // `j` brings.
                    ("dayPeriod", "narrow") => {
                        day_period = Some("BBBBB");
                        continue;
                    }
                    ("dayPeriod", "long") => {
                        day_period = Some("BBBB");
                        continue;
                    }
                    ("dayPeriod", _) => {
                        day_period = Some("B");
                        continue;
                    }
                    ("hour", "2-digit") => {
                        skeleton.push(hour_char);
                        skeleton.push(hour_char);
                        continue;
                    }
                    ("hour", _) => {
                        skeleton.push(hour_char);
                        continue;
                    }
                    ("minute", "2-digit") => "mm",
                    ("minute", _) => "m",
                    ("second", "2-digit") => "ss",
                    ("second", _) => "s",
                    ("timeZoneName", "long") => "zzzz",
                    ("timeZoneName", "shortOffset") => "O",
                    ("timeZoneName", "longOffset") => "OOOO",
                    ("timeZoneName", "shortGeneric") => "v",
                    ("timeZoneName", "longGeneric") => "vvvv",
                    ("timeZoneName", _) => "z",
                    _ => "",
                };
                skeleton.push_str(s);
            }
            if let Some(b) = day_period.take() {
                skeleton.push_str(b);
            }
            if skeleton.contains('v') {
                return Err(unsupported("timeZoneName 'shortGeneric'/'longGeneric'").into());
            }
            let pattern = dtpg.best_pattern(&skeleton);
            let hc_for_pattern = if values[6].is_some() { hc } else { None };
            (replace_hour_cycle(&pattern, hc_for_pattern), None, None)
        };
        Ok(Self { locale, locale_str, zone, pattern, date_style: ds, time_style: ts })
    }

    pub fn resolved_options(&self) -> Vec<(&'static str, JsValue)> {
        let s = |v: &str| JsValue::from(JsString::from(v));
        let mut out = vec![
            ("locale", s(&self.locale_str)),
            ("calendar", s("gregory")),
            ("numberingSystem", s("latn")),
            ("timeZone", s(&self.zone.name)),
        ];
        let hc = hour_cycle_of(&self.pattern);
        if let Some(hc) = hc {
            out.push(("hourCycle", s(hc.name())));
            out.push(("hour12", JsValue::from(matches!(hc, HourCycle::H11 | HourCycle::H12))));
        }
        if self.date_style.is_some() || self.time_style.is_some() {
            if let Some(d) = self.date_style {
                out.push(("dateStyle", s(STYLES[d])));
            }
            if let Some(t) = self.time_style {
                out.push(("timeStyle", s(STYLES[t])));
            }
            return out;
        }
        // V8 reads the components back from the pattern by substring search (quoted text
        // included: "(second: s)" reports a day).
        let pattern = &self.pattern;
        let rows: [(&'static str, Vec<(&str, &'static str)>); 9] = [
            (
                "weekday",
                vec![
                    ("EEEEE", "narrow"),
                    ("EEEE", "long"),
                    ("EEE", "short"),
                    ("ccccc", "narrow"),
                    ("cccc", "long"),
                    ("ccc", "short"),
                ],
            ),
            ("era", vec![("GGGGG", "narrow"), ("GGGG", "long"), ("GGG", "short")]),
            ("year", vec![("yy", "2-digit"), ("y", "numeric")]),
            (
                "month",
                vec![
                    ("MMMMM", "narrow"),
                    ("MMMM", "long"),
                    ("MMM", "short"),
                    ("MM", "2-digit"),
                    ("M", "numeric"),
                    ("LLLLL", "narrow"),
                    ("LLLL", "long"),
                    ("LLL", "short"),
                    ("LL", "2-digit"),
                    ("L", "numeric"),
                ],
            ),
            ("day", vec![("dd", "2-digit"), ("d", "numeric")]),
            (
                "dayPeriod",
                vec![
                    ("BBBBB", "narrow"),
                    ("bbbbb", "narrow"),
                    ("BBBB", "long"),
                    ("bbbb", "long"),
                    ("B", "short"),
                    ("b", "short"),
                ],
            ),
            (
                "hour",
                vec![
                    ("HH", "2-digit"),
                    ("H", "numeric"),
                    ("hh", "2-digit"),
                    ("h", "numeric"),
                    ("kk", "2-digit"),
                    ("k", "numeric"),
                    ("KK", "2-digit"),
                    ("K", "numeric"),
                ],
            ),
            ("minute", vec![("mm", "2-digit"), ("m", "numeric")]),
            ("second", vec![("ss", "2-digit"), ("s", "numeric")]),
        ];
        for (name, pairs) in rows {
            if let Some((_, v)) = pairs.iter().find(|(p, _)| pattern.contains(p)) {
                out.push((name, s(v)));
            }
        }
        let fsd = pattern.chars().filter(|c| *c == 'S').count().min(3);
        if fsd > 0 {
            out.push(("fractionalSecondDigits", JsValue::from(fsd as u32)));
        }
        let zones = [
            ("zzzz", "long"),
            ("z", "short"),
            ("OOOO", "longOffset"),
            ("O", "shortOffset"),
            ("vvvv", "longGeneric"),
            ("v", "shortGeneric"),
        ];
        if let Some((_, v)) = zones.iter().find(|(p, _)| pattern.contains(p)) {
            out.push(("timeZoneName", s(v)));
        }
        out
    }

    /// The formatted string: V8 turns CLDR's U+202F (before AM/PM) into a plain space here,
    /// not in `formatToParts`.
    pub fn format(&self, t: f64) -> String {
        self.format_to_parts(t)
            .into_iter()
            .map(|p| p.value)
            .collect::<String>()
            .replace('\u{202f}', " ")
    }

    pub fn format_to_parts(&self, t: f64) -> Vec<Part> {
        let f = Fields::at(t, &self.zone);
        let data = self.locale.date_data();
        let mut out: Vec<Part> = Vec::new();
        let fields = items(&self.pattern);
        let has_minute = fields.iter().any(|i| matches!(i, Item::Field('m', _)));
        let has_second = fields.iter().any(|i| matches!(i, Item::Field('s', _)));
        for item in &fields {
            match item {
                Item::Literal(c) => push_literal(&mut out, &c.to_string()),
                Item::Quoted(q) => {
                    let inner = &q[1..q
                        .len()
                        .saturating_sub(if q.ends_with('\'') && q.len() > 1 { 1 } else { 0 })];
                    let text = if q == "''" { "'".to_owned() } else { inner.replace("''", "'") };
                    push_literal(&mut out, &text);
                }
                Item::Field(c, len) => {
                    let (ty, value) = self.field(*c, *len, &f, data, has_minute, has_second);
                    if ty == "literal" {
                        push_literal(&mut out, &value);
                    } else {
                        out.push(Part::new(ty, value));
                    }
                }
            }
        }
        out
    }

    fn field(
        &self,
        c: char,
        len: usize,
        f: &Fields,
        data: &'static DateData,
        has_minute: bool,
        has_second: bool,
    ) -> (&'static str, String) {
        let pad = |n: i64, width: usize| format!("{n:0width$}");
        let era_year = if f.year <= 0 { 1 - f.year } else { f.year };
        let width = |len: usize| match len {
            4 => 1,
            5 => 2,
            _ => 0,
        };
        match c {
            'G' => ("era", data.eras[width(len)][usize::from(f.year > 0)].to_owned()),
            'y' => ("year", if len == 2 { pad(era_year % 100, 2) } else { pad(era_year, len) }),
            'M' | 'L' => {
                let m = (f.month - 1) as usize;
                let base = if c == 'L' { 3 } else { 0 };
                match len {
                    1 => ("month", f.month.to_string()),
                    2 => ("month", pad(i64::from(f.month), 2)),
                    3 => ("month", data.months[base][m].to_owned()),
                    4 => ("month", data.months[base + 1][m].to_owned()),
                    _ => ("month", data.months[base + 2][m].to_owned()),
                }
            }
            'd' => ("day", pad(i64::from(f.day), len)),
            'E' | 'c' | 'e' => {
                let w = f.weekday as usize;
                let base = if c == 'c' { 4 } else { 0 };
                let set = match len {
                    4 => 1,
                    5 => 2,
                    6 => 3,
                    _ => 0,
                };
                ("weekday", data.days[base + set][w].to_owned())
            }
            'a' | 'b' => {
                let w = width(len);
                ("dayPeriod", data.am_pm[w][usize::from(f.hour >= 12)].to_owned())
            }
            'B' => {
                let minute_of_day = f.hour * 60 + f.minute;
                let w = width(len);
                let exact_noon = f.hour == 12
                    && (!has_minute || f.minute == 0)
                    && (!has_second || f.second == 0);
                let mut name = "";
                for (from, before, names) in data.day_periods {
                    let (from, before) = (u32::from(*from), u32::from(*before));
                    if from == before {
                        // "at" rules: noon only (midnight is not used by ICU).
                        if from == 720 && exact_noon {
                            name = names[w];
                            break;
                        }
                        continue;
                    }
                    let inside = if from < before {
                        (from..before).contains(&minute_of_day)
                    } else {
                        minute_of_day >= from || minute_of_day < before
                    };
                    if inside && name.is_empty() {
                        name = names[w];
                    }
                }
                ("dayPeriod", name.to_owned())
            }
            'h' => (
                "hour",
                pad(i64::from(if f.hour.is_multiple_of(12) { 12 } else { f.hour % 12 }), len),
            ),
            'H' => ("hour", pad(i64::from(f.hour), len)),
            'K' => ("hour", pad(i64::from(f.hour % 12), len)),
            'k' => ("hour", pad(i64::from(if f.hour == 0 { 24 } else { f.hour }), len)),
            'm' => ("minute", pad(i64::from(f.minute), len)),
            's' => ("second", pad(i64::from(f.second), len)),
            'S' => {
                let ms = format!("{:03}", f.millisecond);
                let mut s: String = ms.chars().take(len).collect();
                while s.len() < len {
                    s.push('0');
                }
                ("fractionalSecond", s)
            }
            'z' => ("timeZoneName", self.zone_name(f, data, len >= 4)),
            'O' => ("timeZoneName", gmt(data, f.offset, len >= 4)),
            _ => ("literal", std::iter::repeat_n(c, len).collect()),
        }
    }

    /// Specific zone name (`z`, `zzzz`), with the localized GMT format as the fallback.
    fn zone_name(&self, f: &Fields, data: &'static DateData, long: bool) -> String {
        let index = usize::from(long) * 2 + usize::from(f.dst);
        // A row in the locale (even without this name) stops the fallback to en.
        let zone_row =
            |data: &'static DateData| data.zone_names.iter().find(|(z, _)| *z == self.zone.cldr);
        let en = &data::DATE_EN;
        let row =
            zone_row(data).or_else(|| if data.names_inherit_en { zone_row(en) } else { None });
        if let Some((_, names)) = row
            && !names[index].is_empty()
        {
            return names[index].to_owned();
        }
        if let Some(mz) = metazone(&self.zone.cldr, self.instant(f)) {
            let mz_row =
                |data: &'static DateData| data.metazone_names.iter().find(|(m, _)| *m == mz);
            let row =
                mz_row(data).or_else(|| if data.names_inherit_en { mz_row(en) } else { None });
            if let Some((_, names)) = row
                && !names[index].is_empty()
            {
                return names[index].to_owned();
            }
        }
        gmt(data, f.offset, long)
    }

    fn instant(&self, f: &Fields) -> i64 {
        let days = days_from_civil(f.year, f.month, f.day);
        days * 86_400_000
            + i64::from(f.hour) * 3_600_000
            + i64::from(f.minute) * 60_000
            + i64::from(f.second) * 1000
            - i64::from(f.offset) * 1000
    }

    /// `formatRange`: identical renderings collapse to one; otherwise the fallback pattern
    /// joins both when V8 would not use a shared-field interval format.
    pub fn format_range(&self, a: f64, b: f64) -> JsResult<Vec<(Part, &'static str)>> {
        let pa = self.format_to_parts(a);
        let pb = self.format_to_parts(b);
        if pa == pb {
            return Ok(pa.into_iter().map(|p| (p, "shared")).collect());
        }
        Err(unsupported("formatRange of two different dates").into())
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The metazone of a CLDR zone at an instant.
fn metazone(zone: &str, t: i64) -> Option<&'static str> {
    let start = data::ZONE_METAZONES.partition_point(|(z, ..)| *z < zone);
    data::ZONE_METAZONES[start..]
        .iter()
        .take_while(|(z, ..)| *z == zone)
        .find(|(_, _, from, to)| *from <= t && t < *to)
        .map(|(_, mz, ..)| *mz)
}

/// The localized GMT format: "GMT-5", "GMT+5:30" (short) or "GMT-05:00" (long), with the
/// locale's signs (fr: "UTC−5"); seconds appear for historical offsets.
fn gmt(data: &DateData, offset: i32, long: bool) -> String {
    let (pos, neg) = data.hour_format.split_once(';').unwrap_or(("+HH:mm", "-HH:mm"));
    let pattern = if offset < 0 { neg } else { pos };
    let sign: String = pattern.chars().take_while(|c| !matches!(c, 'H' | 'm')).collect();
    let a = offset.unsigned_abs();
    let (h, m, sec) = (a / 3600, a / 60 % 60, a % 60);
    let mut body = if long {
        format!("{h:02}:{m:02}")
    } else if m == 0 && sec == 0 {
        format!("{h}")
    } else {
        format!("{h}:{m:02}")
    };
    if sec != 0 {
        body.push_str(&format!(":{sec:02}"));
    }
    data.gmt_format.replace("{0}", &format!("{sign}{body}"))
}

/// Builds a generator from scratch (for the cost test).
#[cfg(test)]
pub(super) fn cold_generator_for_timing() -> usize {
    let g = Generator::new(&data::DATE_EN);
    g.buckets.iter().map(Vec::len).sum()
}
