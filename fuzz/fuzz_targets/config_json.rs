//! The JSON configuration reader never panics: it accepts, or its error names a field (or
//! says the JSON itself is malformed).
#![no_main]

use kindaxml_stream::{Config, ConfigError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::from_json(text) {
        Ok(c) => {
            // A config that loads is usable.
            let _ = kindaxml_stream::parse("a <cite id=1>b</cite> &amp; <todo/>", &c);
        }
        Err(e) => {
            let msg = e.to_string();
            match &e {
                ConfigError::Json { .. } => assert!(msg.starts_with("config: invalid JSON")),
                ConfigError::UnknownField { field } => assert!(msg.contains(field.as_str())),
                ConfigError::InvalidValue { field, .. }
                | ConfigError::InvalidTagName { field, .. }
                | ConfigError::Conflict { field, .. } => {
                    assert!(!field.is_empty() && msg.contains(field.as_str()), "{msg}")
                }
                _ => {}
            }
        }
    }
});
