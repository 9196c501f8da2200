//! The arbitrary configuration the `chunked` and `sliced` targets draw from the fuzzer's
//! bytes: either preset, any subset of five tags, any strategies, behaviours and limits
//! (small `max_tag_bytes` and `max_span_bytes` included, so the limits are reached).

use arbitrary::{Arbitrary, Unstructured};
use kindaxml_stream::{
    Config, Declarations, DuplicateAttrs, EmptyElements, SelfClosing, Strategy, StrayEndTagPolicy,
    UnknownMode,
};

const TAGS: [&str; 5] = ["cite", "note", "todo", "a", "think"];

pub fn config(u: &mut Unstructured<'_>) -> arbitrary::Result<Config> {
    let mut c = if bool::arbitrary(u)? {
        Config::default()
    } else {
        Config::kindaxml_compat()
    };
    let mut tags = Vec::new();
    for t in TAGS {
        if bool::arbitrary(u)? {
            tags.push(t);
        }
    }
    c = c
        .with_tags(&tags)
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    for t in TAGS {
        if u.ratio(1, 3)? {
            c = c
                .with_recovery(t, *u.choose(Strategy::ALL)?)
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
    }
    if bool::arbitrary(u)? {
        c = c.with_default_recovery(*u.choose(Strategy::ALL)?);
    }
    if bool::arbitrary(u)? {
        c = c
            .with_raw_tags(["think"])
            .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        if bool::arbitrary(u)? {
            c = c
                .with_aliases([("thinking", "think")])
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
    }
    for t in ["todo", "note"] {
        if u.ratio(1, 4)? {
            let b = *u.choose(&[
                SelfClosing::Marker,
                SelfClosing::NextToken,
                SelfClosing::UntilNewline,
            ])?;
            c = c
                .with_self_closing(t, b)
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
    }
    c = c
        .with_autoclose_on_any_tag(bool::arbitrary(u)?)
        .with_autoclose_on_same_tag(bool::arbitrary(u)?)
        .with_trim_punctuation(bool::arbitrary(u)?)
        .with_unknown_mode(*u.choose(&[
            UnknownMode::Strip,
            UnknownMode::Passthrough,
            UnknownMode::TreatAsText,
        ])?)
        .with_stray_end_tag_policy(
            *u.choose(&[StrayEndTagPolicy::Drop, StrayEndTagPolicy::Passthrough])?,
        )
        .with_decode_entities(bool::arbitrary(u)?)
        .with_markdown_code(bool::arbitrary(u)?)
        .with_declarations(*u.choose(&[Declarations::Text, Declarations::Drop])?)
        .with_empty_elements(*u.choose(&[EmptyElements::Drop, EmptyElements::Marker])?)
        .with_duplicate_attrs(*u.choose(&[
            DuplicateAttrs::Last,
            DuplicateAttrs::First,
            DuplicateAttrs::All,
        ])?);
    c = c
        .with_case_sensitive_tags(bool::arbitrary(u)?)
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    if u.ratio(1, 3)? {
        c = c
            .with_max_tag_bytes(u.int_in_range(1..=64)?)
            .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    }
    if u.ratio(1, 3)? {
        c = c
            .with_max_span_bytes(u.int_in_range(1..=64)?)
            .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    }
    Ok(c)
}
