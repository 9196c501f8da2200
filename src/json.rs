//! JSON (feature `serde`): the configuration format of SPEC §10 and the output shapes of the
//! `kxml` tool, as `serde::Serialize` implementations.
//!
//! Output shapes (compact, keys in this order, attribute keys sorted, `true` for a bare
//! attribute, an array of values for an attribute kept more than once):
//!
//! ```text
//! Document: {"text":"…","segments":[{"text":"…","ann":[{"tag":"cite","attrs":{"id":"1"}}]}],
//!            "markers":[{"pos":6,"tag":"todo","attrs":{}}]}
//! Event:    {"type":"text","text":"…","ann":[…]}  |  {"type":"marker","pos":6,"tag":"…","attrs":{…}}
//! ```

use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};
use serde_json::{Map, Value};

use crate::config::{
    Config, Declarations, DuplicateAttrs, EmptyElements, SelfClosing, Strategy, StrayEndTagPolicy,
    UnknownMode,
};
use crate::error::ConfigError;
use crate::output::{Annotation, AttrValue, Attrs, Document, Event, Marker, Segment};

/// The fields a configuration object may have.
pub(crate) const CONFIG_FIELDS: &[&str] = &[
    "preset",
    "recognized_tags",
    "per_tag_recovery",
    "default_recovery",
    "unknown_mode",
    "autoclose_on_any_tag",
    "autoclose_on_same_tag",
    "trim_punctuation",
    "case_sensitive_tags",
    "stray_end_tag_policy",
    "decode_entities",
    "duplicate_attrs",
    "max_tag_bytes",
    "max_span_bytes",
    "markdown_code",
    "raw_tags",
    "aliases",
    "self_closing",
    "declarations",
    "empty_elements",
    "max_depth",
];

fn invalid(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::InvalidValue {
        field: field.into(),
        message: message.into(),
    }
}

fn get_bool(v: &Value, field: &str) -> Result<bool, ConfigError> {
    v.as_bool()
        .ok_or_else(|| invalid(field, format!("expected true or false, got {v}")))
}

fn get_str<'a>(v: &'a Value, field: &str) -> Result<&'a str, ConfigError> {
    v.as_str()
        .ok_or_else(|| invalid(field, format!("expected a string, got {v}")))
}

fn get_size(v: &Value, field: &str) -> Result<usize, ConfigError> {
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| invalid(field, format!("expected a positive integer, got {v}")))
}

fn parse_enum<T>(
    v: &Value,
    field: &str,
    f: impl Fn(&str) -> Result<T, String>,
) -> Result<T, ConfigError> {
    f(get_str(v, field)?).map_err(|m| invalid(field, m))
}

impl Config {
    /// Reads a JSON configuration (SPEC §10): kindaxml's field names plus `preset`
    /// (`default` or `kindaxml_compat`, the base the other fields override; default
    /// `default`), `default_recovery`, `decode_entities`, `markdown_code`, `raw_tags`,
    /// `aliases` (`{"alias": "tag"}`), `self_closing` (`{"tag": "marker|next_token|until_newline"}`),
    /// `duplicate_attrs`, `declarations` (`text|drop`), `empty_elements` (`drop|marker`),
    /// `max_tag_bytes`, `max_span_bytes`, `max_depth`.
    ///
    /// ```
    /// use kindaxml_stream::{Config, Strategy};
    /// let c = Config::from_json(r#"{"preset":"kindaxml_compat","recognized_tags":["cite","note"],
    ///     "per_tag_recovery":{"note":"forward_until_tag"}}"#)?;
    /// assert_eq!(c.strategy_for("note"), Some(Strategy::ForwardUntilTag));
    /// assert_eq!(c.strategy_for("cite"), Some(Strategy::RetroLine));
    /// let err = Config::from_json(r#"{"recognised_tags":["cite"]}"#).unwrap_err();
    /// assert_eq!(err.to_string(), "config: unknown field `recognised_tags`");
    /// # Ok::<(), kindaxml_stream::ConfigError>(())
    /// ```
    ///
    /// # Errors
    /// [`ConfigError`] naming the field: unknown fields, wrong types, unknown strategy or
    /// mode names, invalid tag names, malformed JSON.
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        let v: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json {
            message: e.to_string(),
        })?;
        Config::from_json_value(&v)
    }

    /// Like [`from_json`](Config::from_json), from a parsed JSON value.
    ///
    /// # Errors
    /// As [`from_json`](Config::from_json).
    pub fn from_json_value(v: &Value) -> Result<Config, ConfigError> {
        let obj = v
            .as_object()
            .ok_or_else(|| invalid("(root)", format!("expected a JSON object, got {v}")))?;
        if let Some(k) = obj.keys().find(|k| !CONFIG_FIELDS.contains(&k.as_str())) {
            return Err(ConfigError::UnknownField { field: k.clone() });
        }
        let base = match obj.get("preset") {
            None => Config::default(),
            Some(p) => match get_str(p, "preset")? {
                "default" => Config::default(),
                "kindaxml_compat" => Config::kindaxml_compat(),
                other => {
                    return Err(invalid(
                        "preset",
                        format!("unknown preset `{other}` (expected default or kindaxml_compat)"),
                    ))
                }
            },
        };
        apply_json(base, obj)
    }
}

fn get_names(v: &Value, field: &str) -> Result<Vec<String>, ConfigError> {
    let arr = v
        .as_array()
        .ok_or_else(|| invalid(field, format!("expected an array of tag names, got {v}")))?;
    let mut names = Vec::with_capacity(arr.len());
    for (i, t) in arr.iter().enumerate() {
        names.push(get_str(t, &format!("{field}[{i}]"))?.to_string());
    }
    Ok(names)
}

fn get_map<'a>(
    v: &'a Value,
    field: &str,
    what: &str,
) -> Result<&'a Map<String, Value>, ConfigError> {
    v.as_object()
        .ok_or_else(|| invalid(field, format!("expected an object of {what}, got {v}")))
}

fn apply_json(mut c: Config, obj: &Map<String, Value>) -> Result<Config, ConfigError> {
    if let Some(v) = obj.get("recognized_tags") {
        c = c.with_tags(get_names(v, "recognized_tags")?)?;
    }
    if let Some(v) = obj.get("raw_tags") {
        c = c.with_raw_tags(get_names(v, "raw_tags")?)?;
    }
    if let Some(v) = obj.get("aliases") {
        let mut pairs = Vec::new();
        for (alias, target) in get_map(v, "aliases", "alias: tag")? {
            pairs.push((
                alias.clone(),
                get_str(target, &format!("aliases.{alias}"))?.to_string(),
            ));
        }
        c = c.with_aliases(pairs)?;
    }
    if let Some(v) = obj.get("self_closing") {
        for (tag, b) in get_map(v, "self_closing", "tag: behaviour")? {
            let field = format!("self_closing.{tag}");
            c = c.with_self_closing(tag, parse_enum(b, &field, str::parse::<SelfClosing>)?)?;
        }
    }
    if let Some(v) = obj.get("markdown_code") {
        c = c.with_markdown_code(get_bool(v, "markdown_code")?);
    }
    if let Some(v) = obj.get("declarations") {
        c = c.with_declarations(parse_enum(v, "declarations", str::parse::<Declarations>)?);
    }
    if let Some(v) = obj.get("empty_elements") {
        c = c.with_empty_elements(parse_enum(
            v,
            "empty_elements",
            str::parse::<EmptyElements>,
        )?);
    }
    if let Some(v) = obj.get("case_sensitive_tags") {
        c = c.with_case_sensitive_tags(get_bool(v, "case_sensitive_tags")?)?;
    }
    if let Some(v) = obj.get("default_recovery") {
        c = c.with_default_recovery(parse_enum(v, "default_recovery", str::parse::<Strategy>)?);
    }
    if let Some(v) = obj.get("per_tag_recovery") {
        let m = v.as_object().ok_or_else(|| {
            invalid(
                "per_tag_recovery",
                format!("expected an object of tag: strategy, got {v}"),
            )
        })?;
        for (tag, s) in m {
            let field = format!("per_tag_recovery.{tag}");
            let st = parse_enum(s, &field, str::parse::<Strategy>)?;
            c = c
                .with_recovery(tag, st)
                .map_err(|_| ConfigError::InvalidTagName {
                    field: "per_tag_recovery".into(),
                    name: tag.clone(),
                })?;
        }
    }
    if let Some(v) = obj.get("unknown_mode") {
        c = c.with_unknown_mode(parse_enum(v, "unknown_mode", str::parse::<UnknownMode>)?);
    }
    if let Some(v) = obj.get("autoclose_on_any_tag") {
        c = c.with_autoclose_on_any_tag(get_bool(v, "autoclose_on_any_tag")?);
    }
    if let Some(v) = obj.get("autoclose_on_same_tag") {
        c = c.with_autoclose_on_same_tag(get_bool(v, "autoclose_on_same_tag")?);
    }
    if let Some(v) = obj.get("trim_punctuation") {
        c = c.with_trim_punctuation(get_bool(v, "trim_punctuation")?);
    }
    if let Some(v) = obj.get("stray_end_tag_policy") {
        c = c.with_stray_end_tag_policy(parse_enum(
            v,
            "stray_end_tag_policy",
            str::parse::<StrayEndTagPolicy>,
        )?);
    }
    if let Some(v) = obj.get("decode_entities") {
        c = c.with_decode_entities(get_bool(v, "decode_entities")?);
    }
    if let Some(v) = obj.get("duplicate_attrs") {
        c = c.with_duplicate_attrs(parse_enum(
            v,
            "duplicate_attrs",
            str::parse::<DuplicateAttrs>,
        )?);
    }
    if let Some(v) = obj.get("max_tag_bytes") {
        c = c.with_max_tag_bytes(get_size(v, "max_tag_bytes")?)?;
    }
    if let Some(v) = obj.get("max_depth") {
        c = c.with_max_depth(get_size(v, "max_depth")?)?;
    }
    if let Some(v) = obj.get("max_span_bytes") {
        c = c.with_max_span_bytes(get_size(v, "max_span_bytes")?)?;
    }
    Ok(c)
}

// --------------------------------------------------------------------------- output

struct AttrsJson<'a>(&'a Attrs);

impl Serialize for AttrsJson<'_> {
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let groups = self.0.grouped();
        let mut m = s.serialize_map(Some(groups.len()))?;
        for (name, values) in groups {
            if values.len() == 1 {
                m.serialize_entry(name, &ValueJson(values[0]))?;
            } else {
                let vs: Vec<ValueJson<'_>> = values.into_iter().map(ValueJson).collect();
                m.serialize_entry(name, &vs)?;
            }
        }
        m.end()
    }
}

struct ValueJson<'a>(&'a AttrValue);

impl Serialize for ValueJson<'_> {
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            AttrValue::Str(v) => s.serialize_str(v),
            AttrValue::True => s.serialize_bool(true),
        }
    }
}

impl Serialize for Annotation {
    /// `{"tag":…,"attrs":{…}}`.
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Annotation", 2)?;
        st.serialize_field("tag", self.tag())?;
        st.serialize_field("attrs", &AttrsJson(self.attrs()))?;
        st.end()
    }
}

struct AnnList<'a>(&'a [Annotation]);

impl Serialize for AnnList<'_> {
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for a in self.0 {
            seq.serialize_element(a)?;
        }
        seq.end()
    }
}

impl Serialize for Segment {
    /// `{"text":…,"ann":[…]}`.
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Segment", 2)?;
        st.serialize_field("text", self.text())?;
        st.serialize_field("ann", &AnnList(self.annotations()))?;
        st.end()
    }
}

impl Serialize for Marker {
    /// `{"pos":…,"tag":…,"attrs":{…}}`.
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Marker", 3)?;
        st.serialize_field("pos", &self.pos())?;
        st.serialize_field("tag", self.annotation().tag())?;
        st.serialize_field("attrs", &AttrsJson(self.annotation().attrs()))?;
        st.end()
    }
}

impl Serialize for Document {
    /// `{"text":…,"segments":[…],"markers":[…]}`.
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Document", 3)?;
        st.serialize_field("text", self.text())?;
        st.serialize_field("segments", self.segments())?;
        st.serialize_field("markers", self.markers())?;
        st.end()
    }
}

impl Serialize for Event {
    /// `{"type":"text","text":…,"ann":[…]}` or `{"type":"marker","pos":…,"tag":…,"attrs":{…}}`.
    // Bounds: `values` is a non-empty group from `Attrs::grouped`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Event::Text(seg) => {
                let mut st = s.serialize_struct("Event", 3)?;
                st.serialize_field("type", "text")?;
                st.serialize_field("text", seg.text())?;
                st.serialize_field("ann", &AnnList(seg.annotations()))?;
                st.end()
            }
            Event::Marker(m) => {
                let mut st = s.serialize_struct("Event", 4)?;
                st.serialize_field("type", "marker")?;
                st.serialize_field("pos", &m.pos())?;
                st.serialize_field("tag", m.annotation().tag())?;
                st.serialize_field("attrs", &AttrsJson(m.annotation().attrs()))?;
                st.end()
            }
        }
    }
}

impl Document {
    /// The document as one line of JSON (the `kxml --format document` output).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Event {
    /// The event as one line of JSON (a `kxml --format jsonl` line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
