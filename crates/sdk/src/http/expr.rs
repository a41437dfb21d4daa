//! Arithmetic over a row's fields, for derived fields in a response mapping
//! (`"sharePct": "value / sum(value) * 100"`, `"change1dBps": "(yield - prev(yield)) * 100"`).
//!
//! Grammar: numbers, field names (letters, digits, `_`), `+ - * /`, parentheses, unary minus,
//! and functions over a field: `sum(f)` (over all rows), `cumsum(f)` (the running sum from the
//! first row to this one: an order book's cumulative size), `prev(f)` (the previous row's
//! value, null on the first row) and `first(f)`. A null or missing operand, or a division by
//! zero, gives null: a derived value is never invented. Parsed once when the spec is read.

use serde_json::{Map, Number, Value};

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal.
    Num(f64),
    /// The row's field.
    Field(String),
    /// `sum(field)` over every row.
    Sum(String),
    /// `cumsum(field)`: the sum over the rows up to and including this one.
    CumSum(String),
    /// `prev(field, n)`: the field `n` rows back (`prev(field)` is `n = 1`).
    Prev(String, usize),
    /// `first(field)`: the first row's field.
    First(String),
    /// `-e`.
    Neg(Box<Expr>),
    /// `a op b`.
    Bin(Box<Expr>, Op, Box<Expr>),
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

impl std::str::FromStr for Expr {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let mut p = Parser { s: text.as_bytes(), i: 0 };
        let e = p.sum()?;
        p.ws();
        if p.i < p.s.len() {
            return Err(format!("unexpected `{}` at {} in `{text}`", &text[p.i..], p.i));
        }
        Ok(e)
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut e = self.product()?;
        loop {
            let op = if self.eat(b'+') {
                Op::Add
            } else if self.eat(b'-') {
                Op::Sub
            } else {
                return Ok(e);
            };
            e = Expr::Bin(Box::new(e), op, Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        loop {
            let op = if self.eat(b'*') {
                Op::Mul
            } else if self.eat(b'/') {
                Op::Div
            } else {
                return Ok(e);
            };
            e = Expr::Bin(Box::new(e), op, Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat(b'-') {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat(b'(') {
            let e = self.sum()?;
            return if self.eat(b')') { Ok(e) } else { Err(self.expected("`)`")) };
        }
        self.ws();
        let start = self.i;
        let c = self.s.get(self.i).copied().unwrap_or(0);
        if c.is_ascii_digit() || c == b'.' {
            while self.i < self.s.len()
                && (self.s[self.i].is_ascii_digit() || matches!(self.s[self.i], b'.' | b'e'))
            {
                self.i += 1;
            }
            let text = String::from_utf8_lossy(&self.s[start..self.i]);
            return text.parse().map(Expr::Num).map_err(|_| format!("bad number `{text}`"));
        }
        let name = self.ident();
        if name.is_empty() {
            return Err(self.expected("a number, a field or `(`"));
        }
        if !self.eat(b'(') {
            return Ok(Expr::Field(name));
        }
        self.ws();
        let arg = self.ident();
        if arg.is_empty() {
            return Err(self.expected("a field name"));
        }
        let mut back = 1;
        if name == "prev" && self.eat(b',') {
            self.ws();
            let start = self.i;
            while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                self.i += 1;
            }
            back = String::from_utf8_lossy(&self.s[start..self.i])
                .parse()
                .map_err(|_| self.expected("a row count"))?;
        }
        if !self.eat(b')') {
            return Err(self.expected("`)`"));
        }
        match name.as_str() {
            "sum" => Ok(Expr::Sum(arg)),
            "cumsum" => Ok(Expr::CumSum(arg)),
            "prev" => Ok(Expr::Prev(arg, back)),
            "first" => Ok(Expr::First(arg)),
            other => Err(format!("unknown function `{other}` (known: sum, cumsum, prev, first)")),
        }
    }

    fn ident(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn expected(&self, what: &str) -> String {
        let rest = String::from_utf8_lossy(&self.s[self.i.min(self.s.len())..]);
        if rest.is_empty() {
            format!("expected {what} at the end")
        } else {
            format!("expected {what} at `{rest}`")
        }
    }
}

impl Expr {
    /// The value for row `i` of `rows` (null when any operand is missing or not a number).
    pub fn eval(&self, rows: &[Map<String, Value>], i: usize) -> Option<f64> {
        let field = |row: Option<&Map<String, Value>>, f: &str| row?.get(f)?.as_f64();
        match self {
            Expr::Num(n) => Some(*n),
            Expr::Field(f) => field(rows.get(i), f),
            Expr::Sum(f) => rows.iter().map(|r| field(Some(r), f)).sum(),
            Expr::CumSum(f) => rows.iter().take(i + 1).map(|r| field(Some(r), f)).sum(),
            Expr::Prev(f, n) => field(i.checked_sub(*n).and_then(|j| rows.get(j)), f),
            Expr::First(f) => field(rows.first(), f),
            Expr::Neg(e) => e.eval(rows, i).map(|v| -v),
            Expr::Bin(a, op, b) => {
                let (a, b) = (a.eval(rows, i)?, b.eval(rows, i)?);
                let v = match op {
                    Op::Add => settle(a + b, a.abs().max(b.abs())),
                    Op::Sub => settle(a - b, a.abs().max(b.abs())),
                    Op::Mul => a * b,
                    Op::Div if b == 0.0 => return None,
                    Op::Div => a / b,
                };
                v.is_finite().then_some(v)
            }
        }
    }
}

/// A sum or difference without the digits past the 15th significant one of its larger operand,
/// which are binary noise: 67706.94 - 67706.93 is 0.0100000000093 in f64, a spread of 0.01.
fn settle(v: f64, operand: f64) -> f64 {
    if operand == 0.0 {
        return v;
    }
    let k = 10f64.powi(14 - operand.log10().floor() as i32);
    let r = (v * k).round() / k;
    if r.is_finite() { r } else { v }
}

/// `v` as a JSON number rounded to 10 significant decimals (so `0.1 * 3` shows as 0.3), or null.
pub fn to_json(v: Option<f64>) -> Value {
    v.and_then(|x| {
        let rounded = if x == 0.0 {
            0.0
        } else {
            let scale = 10f64.powi(9 - x.abs().log10().floor() as i32);
            if scale.is_finite() { (x * scale).round() / scale } else { x }
        };
        Number::from_f64(rounded)
    })
    .map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn rows(v: Value) -> Vec<Map<String, Value>> {
        v.as_array().unwrap().iter().map(|r| r.as_object().unwrap().clone()).collect()
    }

    fn eval(text: &str, data: &[Map<String, Value>], i: usize) -> Option<f64> {
        text.parse::<Expr>().unwrap().eval(data, i)
    }

    #[test]
    fn arithmetic_with_precedence_and_row_functions() {
        let data = rows(json!([{"v": 1, "w": 4}, {"v": 3, "w": null}]));
        assert_eq!(eval("1 + 2 * 3", &data, 0), Some(7.0));
        assert_eq!(eval("(1 + 2) * -3", &data, 0), Some(-9.0));
        assert_eq!(eval("v / sum(v) * 100", &data, 1), Some(75.0));
        assert_eq!(eval("v - prev(v)", &data, 1), Some(2.0));
        assert_eq!(eval("v - prev(v)", &data, 0), None, "no previous row");
        assert_eq!(eval("v / first(v)", &data, 1), Some(3.0));
        assert_eq!(eval("cumsum(v)", &data, 0), Some(1.0));
        assert_eq!(eval("cumsum(v)", &data, 1), Some(4.0));
        assert_eq!(eval("cumsum(w)", &data, 1), None, "a gap up to here");
        assert_eq!(eval("v - prev(v, 1)", &data, 1), Some(2.0));
        assert_eq!(eval("prev(v, 2)", &data, 1), None, "two rows back is before the first");
        let year = rows(json!([{"i": 100}, {"i": 101}, {"i": 103}]));
        assert_eq!(to_json(eval("(i / prev(i, 2) - 1) * 100", &year, 2)), json!(3.0));
        assert_eq!(eval("w * 2", &data, 1), None, "null operand");
        assert_eq!(eval("missing + 1", &data, 0), None);
        assert_eq!(eval("v / 0", &data, 0), None, "no infinities");
        assert_eq!(to_json(eval("0.1 * 3", &data, 0)), json!(0.3));
        let book = rows(json!([{"bid": 67706.93, "ask": 67706.94}]));
        assert_eq!(to_json(eval("ask - bid", &book, 0)), json!(0.01), "no cancellation noise");
    }

    #[test]
    fn parse_errors_say_where() {
        let e = "v * ".parse::<Expr>().unwrap_err();
        assert!(e.contains("at the end"), "{e}");
        let e = "avg(v)".parse::<Expr>().unwrap_err();
        assert!(e.contains("unknown function `avg`"), "{e}");
        let e = "(v + 1".parse::<Expr>().unwrap_err();
        assert!(e.contains("`)`"), "{e}");
        let e = "v $ 2".parse::<Expr>().unwrap_err();
        assert!(e.contains("unexpected `$ 2`"), "{e}");
    }

    proptest! {
        #[test]
        fn evaluates_like_f64_arithmetic(a in -1e6f64..1e6, b in -1e6f64..1e6, c in 1f64..1e3) {
            let data = rows(json!([{"a": a, "b": b, "c": c}]));
            let got = eval("a + b * c - (a - b) / c", &data, 0).unwrap();
            let want = a + b * c - (a - b) / c;
            prop_assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0));
        }

        #[test]
        fn never_panics_on_any_text(s in "[ a-z0-9+*/().-]{0,24}") {
            if let Ok(e) = s.parse::<Expr>() {
                let _ = e.eval(&rows(json!([{"a": 1}])), 0);
            }
        }
    }
}
