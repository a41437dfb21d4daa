//! The `city_datetime` tool: the current date and time in a city's time zone, from a small
//! built-in table of major cities (English and Chinese names) or an IANA zone name.

use chrono::{Offset, SecondsFormat};
use chrono_tz::Tz;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Args, BackendTool, Clock, ToolContext, ToolError};

const NAME: &str = "city_datetime";

/// Display name, other names (Chinese first), IANA zone.
const CITIES: &[(&str, &[&str], &str)] = &[
    ("Shanghai", &["上海"], "Asia/Shanghai"),
    ("Beijing", &["北京", "Peking"], "Asia/Shanghai"),
    ("Shenzhen", &["深圳"], "Asia/Shanghai"),
    ("Guangzhou", &["广州", "Canton"], "Asia/Shanghai"),
    ("Hangzhou", &["杭州"], "Asia/Shanghai"),
    ("Chengdu", &["成都"], "Asia/Shanghai"),
    ("Wuhan", &["武汉"], "Asia/Shanghai"),
    ("Nanjing", &["南京"], "Asia/Shanghai"),
    ("Chongqing", &["重庆"], "Asia/Shanghai"),
    ("Xi'an", &["西安", "Xian"], "Asia/Shanghai"),
    ("Tianjin", &["天津"], "Asia/Shanghai"),
    ("Hong Kong", &["香港", "HK"], "Asia/Hong_Kong"),
    ("Macau", &["澳门", "Macao"], "Asia/Macau"),
    ("Taipei", &["台北", "臺北"], "Asia/Taipei"),
    ("Tokyo", &["东京", "東京"], "Asia/Tokyo"),
    ("Osaka", &["大阪"], "Asia/Tokyo"),
    ("Seoul", &["首尔", "首爾"], "Asia/Seoul"),
    ("Singapore", &["新加坡"], "Asia/Singapore"),
    ("Bangkok", &["曼谷"], "Asia/Bangkok"),
    ("Jakarta", &["雅加达"], "Asia/Jakarta"),
    ("Kuala Lumpur", &["吉隆坡"], "Asia/Kuala_Lumpur"),
    ("Manila", &["马尼拉"], "Asia/Manila"),
    ("Hanoi", &["河内"], "Asia/Ho_Chi_Minh"),
    ("Ho Chi Minh City", &["胡志明市", "Saigon"], "Asia/Ho_Chi_Minh"),
    ("Mumbai", &["孟买", "Bombay"], "Asia/Kolkata"),
    ("New Delhi", &["新德里", "Delhi"], "Asia/Kolkata"),
    ("Dubai", &["迪拜"], "Asia/Dubai"),
    ("Moscow", &["莫斯科"], "Europe/Moscow"),
    ("Istanbul", &["伊斯坦布尔"], "Europe/Istanbul"),
    ("London", &["伦敦"], "Europe/London"),
    ("Paris", &["巴黎"], "Europe/Paris"),
    ("Berlin", &["柏林"], "Europe/Berlin"),
    ("Frankfurt", &["法兰克福"], "Europe/Berlin"),
    ("Madrid", &["马德里"], "Europe/Madrid"),
    ("Rome", &["罗马"], "Europe/Rome"),
    ("Amsterdam", &["阿姆斯特丹"], "Europe/Amsterdam"),
    ("Zurich", &["苏黎世"], "Europe/Zurich"),
    ("New York", &["纽约", "NYC"], "America/New_York"),
    ("Los Angeles", &["洛杉矶", "LA"], "America/Los_Angeles"),
    ("San Francisco", &["旧金山", "SF"], "America/Los_Angeles"),
    ("Chicago", &["芝加哥"], "America/Chicago"),
    ("Toronto", &["多伦多"], "America/Toronto"),
    ("Vancouver", &["温哥华"], "America/Vancouver"),
    ("Mexico City", &["墨西哥城"], "America/Mexico_City"),
    ("São Paulo", &["圣保罗", "Sao Paulo"], "America/Sao_Paulo"),
    ("Sydney", &["悉尼"], "Australia/Sydney"),
    ("Melbourne", &["墨尔本"], "Australia/Melbourne"),
    ("Auckland", &["奥克兰"], "Pacific/Auckland"),
    ("Cairo", &["开罗"], "Africa/Cairo"),
    ("Johannesburg", &["约翰内斯堡"], "Africa/Johannesburg"),
];

/// A city the tools know, or a zone given by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CityZone {
    /// Display name (`Shanghai`), or the zone name when given one.
    pub name: &'static str,
    /// Its time zone.
    pub tz: Tz,
}

/// Finds a city by name: case, spaces, `-`, `_`, `'`, `.` and a trailing `市`/`city` do not
/// matter (`上海市`, `new-york`, `NEW YORK CITY`); an IANA zone name (`Asia/Tokyo`) works too.
pub fn lookup_city(city: &str) -> Option<CityZone> {
    let key = normalize(city);
    if key.is_empty() {
        return None;
    }
    let stripped = key.strip_suffix('市').or_else(|| key.strip_suffix("city")).unwrap_or(&key);
    for (name, aliases, zone) in CITIES {
        let hit = std::iter::once(name).chain(aliases.iter()).any(|n| {
            let n = normalize(n);
            n == key || n == stripped
        });
        if hit && let Ok(tz) = zone.parse::<Tz>() {
            return Some(CityZone { name, tz });
        }
    }
    city.trim().parse::<Tz>().ok().map(|tz| CityZone { name: tz.name(), tz })
}

fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '-' | '_' | '\'' | '.' | '·'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// A few known names for "unknown city" messages.
pub(crate) fn some_known_cities() -> String {
    let names: Vec<String> = CITIES
        .iter()
        .take(12)
        .map(|(name, aliases, _)| format!("{name} ({})", aliases[0]))
        .collect();
    format!("{}, ...", names.join(", "))
}

/// The `city_datetime` executor.
#[derive(Clone)]
pub struct CityDatetime {
    clock: Clock,
}

impl CityDatetime {
    /// An executor reading "now" from `clock`.
    pub fn new(clock: Clock) -> Self {
        Self { clock }
    }

    /// `{city, timezone, date, time, datetime, weekday, utcOffset}` for a city.
    pub fn now_in(&self, city: &str) -> Result<Value, ToolError> {
        let zone = lookup_city(city).ok_or_else(|| {
            ToolError::invalid(
                NAME,
                format!(
                    "unknown city \"{}\"; known cities include {} or pass an IANA time zone \
                     such as Asia/Shanghai",
                    city.trim(),
                    some_known_cities()
                ),
            )
        })?;
        let now = (self.clock)().with_timezone(&zone.tz);
        Ok(json!({
            "city": zone.name,
            "timezone": zone.tz.name(),
            "date": now.format("%Y-%m-%d").to_string(),
            "time": now.format("%H:%M:%S").to_string(),
            "datetime": now.to_rfc3339_opts(SecondsFormat::Secs, false),
            "weekday": now.format("%A").to_string(),
            "utcOffset": now.offset().fix().to_string(),
        }))
    }
}

impl BackendTool for CityDatetime {
    fn name(&self) -> &str {
        NAME
    }

    fn call(&self, args: Value, _: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let result = Args::new(NAME, &args).and_then(|a| self.now_in(a.req_str("city")?));
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::{DateTime, Utc};

    use super::*;

    fn at(rfc3339: &str) -> CityDatetime {
        let t: DateTime<Utc> = DateTime::parse_from_rfc3339(rfc3339).unwrap().into();
        CityDatetime::new(Arc::new(move || t))
    }

    #[test]
    fn every_table_zone_parses_and_names_resolve() {
        for (name, aliases, zone) in CITIES {
            assert!(zone.parse::<Tz>().is_ok(), "{zone}");
            assert_eq!(lookup_city(name).unwrap().name, *name);
            for a in *aliases {
                assert_eq!(lookup_city(a).unwrap().name, *name, "{a}");
            }
        }
        assert!(CITIES.len() >= 40);
        assert_eq!(lookup_city("上海市").unwrap().name, "Shanghai");
        assert_eq!(lookup_city(" new-york CITY ").unwrap().name, "New York");
        assert_eq!(lookup_city("Asia/Kolkata").unwrap().name, "Asia/Kolkata");
        assert_eq!(lookup_city("Atlantis"), None);
        assert_eq!(lookup_city(""), None);
    }

    #[test]
    fn reports_local_time_with_dst() {
        let t = at("2026-02-13T20:30:00Z");
        let v = t.now_in("上海").unwrap();
        assert_eq!(v["date"], "2026-02-14");
        assert_eq!(v["time"], "04:30:00");
        assert_eq!(v["datetime"], "2026-02-14T04:30:00+08:00");
        assert_eq!(v["weekday"], "Saturday");
        assert_eq!(v["utcOffset"], "+08:00");
        assert_eq!(v["timezone"], "Asia/Shanghai");
        // New York: EST in February, EDT in July.
        assert_eq!(t.now_in("New York").unwrap()["utcOffset"], "-05:00");
        let summer = at("2026-07-01T12:00:00Z");
        assert_eq!(summer.now_in("纽约").unwrap()["utcOffset"], "-04:00");
        assert_eq!(summer.now_in("东京").unwrap()["time"], "21:00:00");
    }

    #[test]
    fn unknown_city_lists_known_ones() {
        let err = at("2026-02-13T00:00:00Z").now_in("Atlantis").unwrap_err().to_string();
        assert!(err.contains("unknown city \"Atlantis\""), "{err}");
        assert!(err.contains("Shanghai (上海)") && err.contains("IANA"), "{err}");
    }
}
