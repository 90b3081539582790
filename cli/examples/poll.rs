//! Polling resetctl politely: ask with the last ETag, so an unchanged
//! answer is a 304 that spends no quota; on a 429 or 503, wait as long as
//! Retry-After says. (docs/clients.md shows this file; tests/clients.rs runs it.)

use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = std::env::var("RESETCTL_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
    let url = format!("{base}/openapi/v1/records/latest");
    let client = reqwest::blocking::Client::new();
    let mut etag: Option<String> = None;
    for _ in 0..2 {
        let mut request = client.get(&url);
        if let Some(tag) = &etag {
            request = request.header("If-None-Match", tag);
        }
        let response = request.send()?;
        let status = response.status().as_u16();
        println!("{status}");
        match status {
            200 => {
                etag = response
                    .headers()
                    .get("etag")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let _body: serde_json::Value = response.json()?; // the record is in "data"
            }
            304 => {} // unchanged: keep what you have
            429 | 503 => {
                let wait = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok()?.parse().ok())
                    .unwrap_or(60);
                std::thread::sleep(Duration::from_secs(wait));
            }
            _ => return Err(format!("unexpected {status}").into()),
        }
    }
    Ok(())
}
