//! The `mock_city_weather` tool: made-up weather that is the same for the same city and date
//! on every call and every run (the seed's `idempotent-random-json` demo data).
//!
//! Values come from a stable hash (xxh3) of the city and the date, not from an RNG whose
//! stream could change between crate versions.

use chrono::NaiveDate;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::{Args, BackendTool, Clock, ToolContext, ToolError, lookup_city};

const NAME: &str = "mock_city_weather";

const CONDITIONS: [&str; 8] = [
    "Sunny",
    "Partly Cloudy",
    "Cloudy",
    "Overcast",
    "Light Rain",
    "Showers",
    "Thunderstorms",
    "Fog",
];

/// The `mock_city_weather` executor.
#[derive(Clone)]
pub struct MockCityWeather {
    clock: Clock,
}

impl MockCityWeather {
    /// An executor whose default date is "today" by `clock`.
    pub fn new(clock: Clock) -> Self {
        Self { clock }
    }

    /// `{city, date, temperatureC, humidity, windLevel, condition, mockTag}`; `date` defaults
    /// to today in the city's time zone (UTC for cities the table does not know).
    pub fn weather(&self, city: &str, date: Option<&str>) -> Result<Value, ToolError> {
        let city = city.trim();
        let zone = lookup_city(city);
        let date = match date {
            Some(d) => NaiveDate::parse_from_str(d.trim(), "%Y-%m-%d").map_err(|_| {
                ToolError::invalid(NAME, format!("\"date\" must be YYYY-MM-DD, got \"{d}\""))
            })?,
            None => match zone {
                Some(z) => (self.clock)().with_timezone(&z.tz).date_naive(),
                None => (self.clock)().date_naive(),
            },
        };
        let date = date.format("%Y-%m-%d").to_string();
        // Same weather for 上海 and Shanghai.
        let key = format!(
            "{}|{date}",
            zone.map_or_else(|| city.to_lowercase(), |z| z.name.to_lowercase())
        );
        let pick = |salt: u64, lo: i64, hi: i64| {
            let span = u64::try_from(hi - lo + 1).unwrap_or(1);
            lo + i64::try_from(xxh3_64_with_seed(key.as_bytes(), salt) % span).unwrap_or(0)
        };
        let temperature = pick(1, -5, 35);
        let humidity = pick(2, 30, 95);
        let wind = pick(3, 1, 6);
        let mut condition = CONDITIONS[usize::try_from(pick(4, 0, 7)).unwrap_or(0)];
        if temperature <= 0 && condition.contains("Rain") {
            condition = "Light Snow";
        }
        Ok(json!({
            "city": city,
            "date": date,
            "temperatureC": temperature,
            "humidity": humidity,
            "windLevel": wind,
            "condition": condition,
            "mockTag": "idempotent-random-json",
        }))
    }
}

impl BackendTool for MockCityWeather {
    fn name(&self) -> &str {
        NAME
    }

    fn call(&self, args: Value, _: ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> {
        let result = Args::new(NAME, &args)
            .and_then(|a| self.weather(a.req_str("city")?, a.opt_str("date")?));
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::{DateTime, Utc};

    use super::*;

    fn tool() -> MockCityWeather {
        let t: DateTime<Utc> = DateTime::parse_from_rfc3339("2026-02-13T20:00:00Z").unwrap().into();
        MockCityWeather::new(Arc::new(move || t))
    }

    #[test]
    fn is_deterministic_and_shaped_like_the_seed() {
        let w = tool().weather("Shanghai", Some("2026-02-13")).unwrap();
        assert_eq!(w, tool().weather("Shanghai", Some("2026-02-13")).unwrap());
        assert_eq!(w["mockTag"], "idempotent-random-json");
        assert_eq!(w["city"], "Shanghai");
        let t = w["temperatureC"].as_i64().unwrap();
        assert!((-5..=35).contains(&t));
        assert!((30..=95).contains(&w["humidity"].as_i64().unwrap()));
        assert!((1..=6).contains(&w["windLevel"].as_i64().unwrap()));
        assert!(w["condition"].is_string());
        // Pinned: a change of the hash or the formula would change every demo.
        assert_eq!(
            (t, &w["humidity"], &w["windLevel"], &w["condition"]),
            (PINNED.0, &json!(PINNED.1), &json!(PINNED.2), &json!(PINNED.3))
        );
        let cn = tool().weather("上海", Some("2026-02-13")).unwrap();
        assert_eq!(cn["temperatureC"], w["temperatureC"]);
        assert_eq!(cn["city"], "上海");
        let other = (1..=10)
            .map(|d| tool().weather("Shanghai", Some(&format!("2026-03-{d:02}"))).unwrap())
            .filter(|o| o["temperatureC"] != w["temperatureC"] || o["condition"] != w["condition"])
            .count();
        assert!(other > 0, "dates change the weather");
    }

    const PINNED: (i64, i64, i64, &str) = (28, 58, 3, "Fog");

    #[test]
    fn date_defaults_to_today_in_the_city() {
        // 20:00 UTC is already the 14th in Shanghai, still the 13th in London.
        assert_eq!(tool().weather("上海", None).unwrap()["date"], "2026-02-14");
        assert_eq!(tool().weather("London", None).unwrap()["date"], "2026-02-13");
        assert_eq!(tool().weather("Atlantis", None).unwrap()["date"], "2026-02-13");
    }

    #[test]
    fn bad_dates_and_missing_city_are_errors() {
        let err = tool().weather("Shanghai", Some("13/02/2026")).unwrap_err().to_string();
        assert!(err.contains("\"date\" must be YYYY-MM-DD"), "{err}");
        let t = tool();
        let err = futures::executor::block_on(
            t.call(json!({"date": "2026-01-01"}), ToolContext::new("r", "c")),
        )
        .unwrap_err();
        assert!(err.to_string().contains("\"city\" is required"), "{err}");
    }
}
