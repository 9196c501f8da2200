//! E4: the `<llmResponse>` contract of seed 001, read by `examples/llm_response/contract.rs`.
//!
//! The seed's valid example gives exact structs however it is chunked; malformed variants
//! show what KindaXML's recovery repairs (with a note) and what the validation rules reject
//! (with the exact error). Expected values are worked out from the rules and the input, and
//! every input is also read in several chunkings, which must all agree.

#[path = "../examples/llm_response/contract.rs"]
mod contract;

use contract::{
    read_response, AttrProblem, ClosedBy, Element, Keyword, LlmResponse, Recovery, ResponseError,
    ResponseReader, Subject, Validated,
};

const SEED_EXAMPLE: &str = include_str!("../examples/llm_response/seed_example.xml");

const RESPONSE: &str = "For college savings, financial advisors often recommend 529 plans. \
They offer tax advantages and can be used for qualified education expenses. The amount to save \
depends on factors like current age of children, expected college costs, and your timeframe.";

const SUMMARY: &str = "User asked about college savings amounts. Assistant explained 529 plans \
and mentioned that savings targets depend on children's ages and expected costs.";

fn keyword(term: &str, confidence: f64) -> Keyword {
    Keyword {
        term: term.to_string(),
        confidence,
    }
}

/// The seed example, typed by hand from its text.
fn seed_value() -> LlmResponse {
    LlmResponse {
        response: RESPONSE.to_string(),
        subjects: vec![Subject {
            name: "college-savings".to_string(),
            description: "Discussion of saving strategies for children's higher education"
                .to_string(),
            is_new: true,
            keywords: vec![
                keyword("529-plan", 0.95),
                keyword("tax-advantages", 0.85),
                keyword("education-expenses", 0.90),
                keyword("financial-planning", 0.75),
            ],
        }],
        summary_update: SUMMARY.to_string(),
    }
}

fn clean(value: LlmResponse) -> Result<Validated, ResponseError> {
    Ok(Validated {
        value,
        recoveries: vec![],
    })
}

/// `input` split into pieces of `size` bytes, each extended to a character boundary.
fn chunks(input: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let mut end = (at + size).min(input.len());
        while !input.is_char_boundary(end) {
            end += 1;
        }
        out.push(&input[at..end]);
        at = end;
    }
    out
}

fn read_in(pieces: &[&str]) -> Result<Validated, ResponseError> {
    let mut reader = ResponseReader::new();
    for p in pieces {
        reader.update(p);
    }
    reader.finish()
}

/// Reads `input` one-shot and in several chunkings; they must agree.
fn read(input: &str) -> Result<Validated, ResponseError> {
    let one_shot = read_response(input);
    for size in [1, 2, 3, 7, 16, 61] {
        assert_eq!(read_in(&chunks(input, size)), one_shot, "chunk size {size}");
    }
    one_shot
}

/// Source offset of the `n`th (from 0) occurrence of `pat`.
fn nth(input: &str, pat: &str, n: usize) -> usize {
    input
        .match_indices(pat)
        .nth(n)
        .unwrap_or_else(|| panic!("{pat:?} #{n} not in input"))
        .0
}

fn at(input: &str, pat: &str) -> usize {
    nth(input, pat, 0)
}

/// `SEED_EXAMPLE` with its response text replaced.
fn with_response(text: &str) -> String {
    SEED_EXAMPLE.replace(RESPONSE, text)
}

// ------------------------------------------------------------------ the valid example

#[test]
fn seed_example_reads_into_exact_structs() {
    assert_eq!(read(SEED_EXAMPLE), clean(seed_value()));
}

#[test]
fn seed_example_in_every_chunk_size_from_1_to_64() {
    for size in 1..=64 {
        let mut reader = ResponseReader::new();
        let mut preview = String::new();
        for c in chunks(SEED_EXAMPLE, size) {
            preview.push_str(reader.update(c));
        }
        assert_eq!(reader.finish(), clean(seed_value()), "chunk size {size}");
        assert_eq!(preview, RESPONSE, "preview, chunk size {size}");
    }
}

#[test]
fn seed_example_at_every_two_way_split() {
    for i in 0..=SEED_EXAMPLE.len() {
        let (a, b) = SEED_EXAMPLE.split_at(i);
        assert_eq!(read_in(&[a, b]), clean(seed_value()), "split at {i}");
    }
}

#[test]
fn response_text_streams_before_the_analysis_arrives() {
    let end = at(SEED_EXAMPLE, "</response>");
    let mut reader = ResponseReader::new();
    let mut preview = String::new();
    for c in chunks(&SEED_EXAMPLE[..end], 5) {
        preview.push_str(reader.update(c));
    }
    assert_eq!(
        preview, RESPONSE,
        "all of the answer is out before its end tag"
    );
    assert_eq!(reader.update(&SEED_EXAMPLE[end..]), "");
    assert_eq!(reader.finish(), clean(seed_value()));
}

#[test]
fn minimal_response_with_no_subjects_and_an_empty_summary() {
    let input =
        "<llmResponse><response>Hi.</response><analysis><summaryUpdate/></analysis></llmResponse>";
    assert_eq!(
        read(input),
        clean(LlmResponse {
            response: "Hi.".to_string(),
            subjects: vec![],
            summary_update: String::new(),
        })
    );
}

// ------------------------------------------------------------------ recovered

#[test]
fn missing_keyword_closers_are_recovered_with_notes() {
    let input = SEED_EXAMPLE.replace("\" />", "\">");
    let kw = |n| nth(&input, "<keyword ", n);
    let before = |n| ClosedBy::Before {
        element: Element::Keyword,
        offset: kw(n),
    };
    let note = |n, closed| Recovery {
        element: Element::Keyword,
        offset: kw(n),
        closed,
    };
    assert_eq!(
        read(&input),
        Ok(Validated {
            value: seed_value(),
            recoveries: vec![
                note(0, before(1)),
                note(1, before(2)),
                note(2, before(3)),
                note(
                    3,
                    ClosedBy::OuterEndTag {
                        element: Element::Subject,
                        offset: at(&input, "</subject>"),
                    }
                ),
            ],
        })
    );
    let r = read(&input).unwrap().recoveries;
    assert_eq!(
        r[0].to_string(),
        format!(
            "<keyword> at byte {}: no end tag; closed before <keyword> at byte {}",
            kw(0),
            kw(1)
        )
    );
    assert_eq!(
        r[3].to_string(),
        format!(
            "<keyword> at byte {}: no end tag; closed by </subject> at byte {}",
            kw(3),
            at(&input, "</subject>")
        )
    );
}

#[test]
fn explicit_keyword_closers_are_accepted() {
    let input = SEED_EXAMPLE.replace("\" />", "\"></keyword>");
    assert_eq!(read(&input), clean(seed_value()));
}

#[test]
fn bare_and_escaped_ampersands_in_text() {
    // Seed 003: a bare `&` or `&&` is literal text, `&amp;` is decoded.
    for (written, read_as) in [
        ("AT&T", "AT&T"),
        ("a && b", "a && b"),
        ("&amp;", "&"),
        ("Fees &amp; taxes & more &lt;3", "Fees & taxes & more <3"),
    ] {
        let mut want = seed_value();
        want.response = read_as.to_string();
        assert_eq!(read(&with_response(written)), clean(want), "{written}");
    }
}

#[test]
fn bare_and_escaped_ampersands_in_attributes() {
    let input = SEED_EXAMPLE
        .replace("tax-advantages", "tax & fees")
        .replace("529-plan", "529 &amp; ESA");
    let mut want = seed_value();
    want.subjects[0].keywords[0].term = "529 & ESA".to_string();
    want.subjects[0].keywords[1].term = "tax & fees".to_string();
    assert_eq!(read(&input), clean(want));
}

#[test]
fn broken_quote_at_the_end_of_a_tag_is_recovered() {
    // SPEC §2: an unclosed quote ends at the `>` (trailing whitespace and the self-closing
    // `/` are not part of the value).
    let input = SEED_EXAMPLE
        .replace("isNew=\"true\">", "isNew=\"true>")
        .replace("confidence=\"0.95\" />", "confidence=\"0.95 />");
    assert_eq!(read(&input), clean(seed_value()));
}

#[test]
fn broken_quote_in_the_middle_of_a_tag_is_rejected() {
    // `name="college-savings description="` is one quoted value; the rest of the description
    // becomes bare words and stray characters, so `description` is missing.
    let input = SEED_EXAMPLE.replace("name=\"college-savings\"", "name=\"college-savings");
    let offset = at(&input, "<subject");
    assert_eq!(
        read(&input),
        Err(ResponseError::MissingAttribute {
            element: Element::Subject,
            attribute: "description",
            offset,
        })
    );
    assert_eq!(
        read(&input).unwrap_err().to_string(),
        format!("<subject> at byte {offset}: missing attribute `description`")
    );
}

#[test]
fn unclosed_summary_update_at_end_of_stream_is_recovered() {
    let input = &SEED_EXAMPLE[..at(SEED_EXAMPLE, "</summaryUpdate>")];
    let note = |element, pat| Recovery {
        element,
        offset: at(input, pat),
        closed: ClosedBy::EndOfInput,
    };
    assert_eq!(
        read(input),
        Ok(Validated {
            value: seed_value(),
            recoveries: vec![
                note(Element::LlmResponse, "<llmResponse>"),
                note(Element::Analysis, "<analysis>"),
                note(Element::SummaryUpdate, "<summaryUpdate>"),
            ],
        })
    );
    assert_eq!(
        read(input).unwrap().recoveries[2].to_string(),
        format!(
            "<summaryUpdate> at byte {}: no end tag; closed at the end of the input",
            at(input, "<summaryUpdate>")
        )
    );
}

#[test]
fn missing_summary_update_closer_before_analysis_end() {
    let input = SEED_EXAMPLE.replace("</summaryUpdate>", "");
    assert_eq!(
        read(&input),
        Ok(Validated {
            value: seed_value(),
            recoveries: vec![Recovery {
                element: Element::SummaryUpdate,
                offset: at(&input, "<summaryUpdate>"),
                closed: ClosedBy::OuterEndTag {
                    element: Element::Analysis,
                    offset: at(&input, "</analysis>"),
                },
            }],
        })
    );
}

#[test]
fn missing_response_closer_ends_the_response_at_the_analysis() {
    let input = SEED_EXAMPLE.replace("</response>", "");
    assert_eq!(
        read(&input),
        Ok(Validated {
            value: seed_value(),
            recoveries: vec![Recovery {
                element: Element::Response,
                offset: at(&input, "<response>"),
                closed: ClosedBy::Before {
                    element: Element::Analysis,
                    offset: at(&input, "<analysis>"),
                },
            }],
        })
    );
}

#[test]
fn missing_subject_closer_before_the_next_subject() {
    let subject =
        &SEED_EXAMPLE[at(SEED_EXAMPLE, "    <subject")..at(SEED_EXAMPLE, "    <summaryUpdate")];
    let unclosed = subject.replace("    </subject>\n", "");
    let input = SEED_EXAMPLE.replacen(subject, &format!("{unclosed}{subject}"), 1);
    let mut want = seed_value();
    want.subjects.push(want.subjects[0].clone());
    assert_eq!(
        read(&input),
        Ok(Validated {
            value: want,
            recoveries: vec![Recovery {
                element: Element::Subject,
                offset: nth(&input, "<subject", 0),
                closed: ClosedBy::Before {
                    element: Element::Subject,
                    offset: nth(&input, "<subject", 1),
                },
            }],
        })
    );
}

#[test]
fn unknown_elements_are_ignored_their_text_kept() {
    let input = with_response("Use a <b>529 plan</b><br/> or an <i>ESA</i>.");
    let mut want = seed_value();
    want.response = "Use a 529 plan or an ESA.".to_string();
    assert_eq!(read(&input), clean(want));
}

#[test]
fn unknown_elements_in_containers_are_ignored() {
    let input = SEED_EXAMPLE
        .replace("<analysis>", "<analysis><confidence>high</confidence>")
        .replace("<llmResponse>", "<llmResponse version=\"1\"><meta/>");
    assert_eq!(read(&input), clean(seed_value()));
}

#[test]
fn echoed_prompt_comments_are_dropped() {
    let input = SEED_EXAMPLE.replace(
        "    </subject>",
        "      <!-- Include 3-7 keywords per subject, e.g. <keyword term=\"x\" confidence=\"0.8\" /> -->\n    </subject>",
    );
    assert_eq!(read(&input), clean(seed_value()));
}

#[test]
fn cdata_response_is_literal() {
    let input = with_response("<![CDATA[Use <angle brackets> & symbols &amp; freely.]]>");
    let mut want = seed_value();
    want.response = "Use <angle brackets> & symbols &amp; freely.".to_string();
    assert_eq!(read(&input), clean(want));
}

#[test]
fn confidence_bounds_are_inclusive() {
    let input = SEED_EXAMPLE
        .replace("\"0.95\"", "\"1.0\"")
        .replace("\"0.85\"", "\"0\"")
        .replace("\"0.90\"", "\" 0.5 \"");
    let mut want = seed_value();
    want.subjects[0].keywords[0].confidence = 1.0;
    want.subjects[0].keywords[1].confidence = 0.0;
    want.subjects[0].keywords[2].confidence = 0.5;
    assert_eq!(read(&input), clean(want));
}

#[test]
fn three_subjects_and_ten_keywords_are_accepted() {
    let extra = "      <keyword term=\"savings-rate\" confidence=\"0.70\" />\n";
    let subject =
        &SEED_EXAMPLE[at(SEED_EXAMPLE, "    <subject")..at(SEED_EXAMPLE, "    <summaryUpdate")];
    let ten = subject.replace(
        "    </subject>",
        &format!("{}    </subject>", extra.repeat(6)),
    );
    let input = SEED_EXAMPLE.replacen(subject, &ten.repeat(3), 1);
    let mut s = seed_value().subjects.remove(0);
    s.keywords
        .extend(std::iter::repeat_n(keyword("savings-rate", 0.70), 6));
    let mut want = seed_value();
    want.subjects = vec![s.clone(), s.clone(), s];
    assert_eq!(read(&input), clean(want));
}

// ------------------------------------------------------------------ rejected

#[test]
fn confidence_above_one_is_rejected() {
    let input = SEED_EXAMPLE.replace("confidence=\"0.85\"", "confidence=\"1.5\"");
    let offset = at(&input, "<keyword term=\"tax-advantages\"");
    let err = read(&input).unwrap_err();
    assert_eq!(
        err,
        ResponseError::InvalidAttribute {
            element: Element::Keyword,
            attribute: "confidence",
            value: "1.5".to_string(),
            problem: AttrProblem::OutOfRange,
            offset,
        }
    );
    assert_eq!(
        err.to_string(),
        format!("<keyword> at byte {offset}: attribute `confidence`=\"1.5\" is outside 0.0..=1.0")
    );
}

#[test]
fn confidence_word_is_rejected() {
    let input = SEED_EXAMPLE.replace("confidence=\"0.85\"", "confidence=\"high\"");
    let offset = at(&input, "<keyword term=\"tax-advantages\"");
    let err = read(&input).unwrap_err();
    assert_eq!(
        err,
        ResponseError::InvalidAttribute {
            element: Element::Keyword,
            attribute: "confidence",
            value: "high".to_string(),
            problem: AttrProblem::NotANumber,
            offset,
        }
    );
    assert_eq!(
        err.to_string(),
        format!("<keyword> at byte {offset}: attribute `confidence`=\"high\" is not a number")
    );
}

#[test]
fn negative_confidence_is_rejected() {
    let input = SEED_EXAMPLE.replace("\"0.75\"", "\"-0.1\"");
    assert_eq!(
        read(&input),
        Err(ResponseError::InvalidAttribute {
            element: Element::Keyword,
            attribute: "confidence",
            value: "-0.1".to_string(),
            problem: AttrProblem::OutOfRange,
            offset: at(&input, "<keyword term=\"financial-planning\""),
        })
    );
}

#[test]
fn four_subjects_are_rejected() {
    let subject =
        &SEED_EXAMPLE[at(SEED_EXAMPLE, "    <subject")..at(SEED_EXAMPLE, "    <summaryUpdate")];
    let input = SEED_EXAMPLE.replacen(subject, &subject.repeat(4), 1);
    assert_eq!(
        read(&input),
        Err(ResponseError::TooMany {
            element: Element::Subject,
            parent: Element::Analysis,
            offset: nth(&input, "<subject ", 3),
            max: 3,
        })
    );
}

#[test]
fn eleven_keywords_are_rejected() {
    let extra = "      <keyword term=\"savings-rate\" confidence=\"0.70\" />\n";
    let input = SEED_EXAMPLE.replace(
        "    </subject>",
        &format!("{}    </subject>", extra.repeat(7)),
    );
    let err = read(&input).unwrap_err();
    let offset = nth(&input, "<keyword ", 10);
    assert_eq!(
        err,
        ResponseError::TooMany {
            element: Element::Keyword,
            parent: Element::Subject,
            offset,
            max: 10,
        }
    );
    assert_eq!(
        err.to_string(),
        format!("<keyword> at byte {offset}: more than 10 <keyword> elements in <subject>")
    );
}

#[test]
fn missing_is_new_is_rejected() {
    let input = SEED_EXAMPLE.replace(" isNew=\"true\"", "");
    assert_eq!(
        read(&input),
        Err(ResponseError::MissingAttribute {
            element: Element::Subject,
            attribute: "isNew",
            offset: at(&input, "<subject"),
        })
    );
}

#[test]
fn is_new_must_be_true_or_false() {
    let input = SEED_EXAMPLE.replace("isNew=\"true\"", "isNew=\"yes\"");
    let err = read(&input).unwrap_err();
    assert_eq!(
        err,
        ResponseError::InvalidAttribute {
            element: Element::Subject,
            attribute: "isNew",
            value: "yes".to_string(),
            problem: AttrProblem::NotABoolean,
            offset: at(&input, "<subject"),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "<subject> at byte {}: attribute `isNew`=\"yes\" is not `true` or `false`",
            at(&input, "<subject")
        )
    );
}

#[test]
fn missing_term_and_valueless_attributes_are_rejected() {
    let input = SEED_EXAMPLE.replace("term=\"education-expenses\" ", "");
    assert_eq!(
        read(&input),
        Err(ResponseError::MissingAttribute {
            element: Element::Keyword,
            attribute: "term",
            offset: nth(&input, "<keyword", 2),
        })
    );
    let input = SEED_EXAMPLE.replace("name=\"college-savings\"", "name");
    assert_eq!(
        read(&input),
        Err(ResponseError::AttributeWithoutValue {
            element: Element::Subject,
            attribute: "name",
            offset: at(&input, "<subject"),
        })
    );
}

#[test]
fn empty_response_is_rejected() {
    for input in [
        with_response("  \n  "),
        with_response(""),
        SEED_EXAMPLE.replace(&format!("<response>{RESPONSE}</response>"), "<response/>"),
    ] {
        let offset = at(&input, "<response");
        let err = read(&input).unwrap_err();
        assert_eq!(
            err,
            ResponseError::EmptyContent {
                element: Element::Response,
                offset,
            },
            "{input}"
        );
        assert_eq!(
            err.to_string(),
            format!("<response> at byte {offset}: empty content")
        );
    }
}

#[test]
fn text_outside_the_root_is_rejected() {
    let input = format!("Sure! Here is my answer:\n\n{SEED_EXAMPLE}");
    assert_eq!(
        read(&input),
        Err(ResponseError::TextOutsideRoot {
            text: "Sure! Here is my answer:".to_string(),
        })
    );
    let input = format!("{SEED_EXAMPLE}\nHope this helps!\n");
    assert_eq!(
        read(&input),
        Err(ResponseError::TextOutsideRoot {
            text: "Hope this helps!".to_string(),
        })
    );
    let long = "Certainly ".repeat(10);
    assert_eq!(
        read(&format!("{long}{SEED_EXAMPLE}")),
        Err(ResponseError::TextOutsideRoot {
            // 60 characters, trailing space dropped, then the ellipsis.
            text: format!("{}…", &"Certainly ".repeat(6)[..59]),
        })
    );
}

#[test]
fn missing_or_wrong_root_is_rejected() {
    assert_eq!(
        read("I could not produce XML this time."),
        Err(ResponseError::MissingRoot)
    );
    assert_eq!(
        read("<response>Hi.</response>"),
        Err(ResponseError::UnexpectedTopLevel {
            element: Element::Response,
            offset: 0,
        })
    );
    let input = format!("{SEED_EXAMPLE}{SEED_EXAMPLE}");
    assert_eq!(
        read(&input),
        Err(ResponseError::UnexpectedTopLevel {
            element: Element::LlmResponse,
            offset: SEED_EXAMPLE.len(),
        })
    );
}

#[test]
fn missing_required_elements_are_rejected() {
    let analysis =
        &SEED_EXAMPLE[at(SEED_EXAMPLE, "  <analysis>")..at(SEED_EXAMPLE, "</llmResponse>")];
    assert_eq!(
        read(&SEED_EXAMPLE.replace(analysis, "")),
        Err(ResponseError::MissingElement {
            element: Element::Analysis,
            parent: Element::LlmResponse,
            offset: 0,
        })
    );
    let summary =
        &SEED_EXAMPLE[at(SEED_EXAMPLE, "<summaryUpdate>")..at(SEED_EXAMPLE, "  </analysis>")];
    let input = SEED_EXAMPLE.replace(summary, "");
    assert_eq!(
        read(&input),
        Err(ResponseError::MissingElement {
            element: Element::SummaryUpdate,
            parent: Element::Analysis,
            offset: at(&input, "<analysis>"),
        })
    );
    assert_eq!(
        read(&input).unwrap_err().to_string(),
        format!(
            "<analysis> at byte {}: missing <summaryUpdate>",
            at(&input, "<analysis>")
        )
    );
}

#[test]
fn duplicate_response_is_rejected() {
    let input = SEED_EXAMPLE.replace("</response>", "</response><response>Again.</response>");
    assert_eq!(
        read(&input),
        Err(ResponseError::Duplicate {
            element: Element::Response,
            parent: Element::LlmResponse,
            offset: nth(&input, "<response>", 1),
        })
    );
}

#[test]
fn element_in_the_wrong_parent_is_rejected() {
    let input = SEED_EXAMPLE.replace(
        "    <summaryUpdate>",
        "    <keyword term=\"stray\" confidence=\"0.9\" />\n    <summaryUpdate>",
    );
    assert_eq!(
        read(&input),
        Err(ResponseError::Misplaced {
            element: Element::Keyword,
            parent: Element::Analysis,
            offset: at(&input, "<keyword term=\"stray\""),
        })
    );
    // An explicitly closed element is not repaired: `<analysis>` inside `<response>…</response>`.
    let input = SEED_EXAMPLE.replace("</response>", "<analysis></analysis></response>");
    assert_eq!(
        read(&input),
        Err(ResponseError::Misplaced {
            element: Element::Analysis,
            parent: Element::Response,
            offset: at(&input, "<analysis>"),
        })
    );
}

#[test]
fn markdown_code_in_the_response_keeps_its_markup() {
    // E2: tags inside code spans and fences are text, not (unknown) elements to strip.
    let text = "Use `Vec<u8>` here:\n```html\n<div class=\"x\">&amp;</div>\n```\nDone.";
    let mut want = seed_value();
    want.response = text.to_string();
    assert_eq!(read(&with_response(text)), clean(want));
}
