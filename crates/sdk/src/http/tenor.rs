//! Maturity labels as providers write them (`"1 Mo"`, `"1.5 Month"`, `"2 Yr"`, `"13 Week"`,
//! `"10Y"`) read as a standard tenor (`"1M"`, `"1.5M"`, `"2Y"`, `"13W"`) and a maturity in years,
//! for the `tenor` and `years` conversions of a response mapping ([`super::convert::Conv`]).

/// A maturity: a positive count of a unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tenor {
    /// How many units (`1.5` in `"1.5 Month"`).
    pub count: f64,
    /// The unit.
    pub unit: Unit,
}

/// Units of a maturity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Days (`D`).
    Day,
    /// Weeks (`W`).
    Week,
    /// Months (`M`).
    Month,
    /// Years (`Y`).
    Year,
}

impl Tenor {
    /// Reads `"<count> <unit>"`, space optional, unit case-insensitive and abbreviated or not
    /// (`d`, `day`; `w`, `wk`, `week`; `m`, `mo`, `mth`, `month`; `y`, `yr`, `year`; plurals too).
    pub fn parse(label: &str) -> Option<Self> {
        let label = label.trim();
        let split = label.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let count: f64 = label[..split].parse().ok().filter(|n: &f64| *n > 0.0)?;
        let unit = match label[split..].trim().to_ascii_lowercase().trim_end_matches('s') {
            "d" | "day" => Unit::Day,
            "w" | "wk" | "week" => Unit::Week,
            "m" | "mo" | "mth" | "month" => Unit::Month,
            "y" | "yr" | "year" => Unit::Year,
            _ => return None,
        };
        Some(Self { count, unit })
    }

    /// The standard label: the count without a needless `.0`, then `D`, `W`, `M` or `Y`.
    pub fn label(&self) -> String {
        let unit = match self.unit {
            Unit::Day => 'D',
            Unit::Week => 'W',
            Unit::Month => 'M',
            Unit::Year => 'Y',
        };
        format!("{}{unit}", self.count)
    }

    /// The maturity in years (a month is 1/12, a week 1/52, a day 1/365).
    pub fn years(&self) -> f64 {
        let per_year = match self.unit {
            Unit::Day => 365.0,
            Unit::Week => 52.0,
            Unit::Month => 12.0,
            Unit::Year => 1.0,
        };
        self.count / per_year
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn treasury_and_standard_labels() {
        let read = |s: &str| Tenor::parse(s).map(|t| (t.label(), t.years()));
        assert_eq!(read("1 Mo"), Some(("1M".into(), 1.0 / 12.0)));
        assert_eq!(read("1.5 Month"), Some(("1.5M".into(), 0.125)));
        assert_eq!(read("2 Yr"), Some(("2Y".into(), 2.0)));
        assert_eq!(read("30 Yr"), Some(("30Y".into(), 30.0)));
        assert_eq!(read("13 Weeks"), Some(("13W".into(), 0.25)));
        assert_eq!(read("10Y"), Some(("10Y".into(), 10.0)));
        assert_eq!(read(" 6mo "), Some(("6M".into(), 0.5)));
        for bad in ["Date", "", "Mo", "0 Mo", "1 Decade", "-1 Yr", "1..5 Mo"] {
            assert_eq!(Tenor::parse(bad), None, "{bad}");
        }
    }
}
