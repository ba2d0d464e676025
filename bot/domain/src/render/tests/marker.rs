//! Markers: every renderer's first line, read back by `parse_marker`.

use crate::render::{parse_marker, Marker, ReplyKind, PANEL_FORMAT};

#[test]
fn marker_round_trips_for_every_kind() {
    let markers = [
        Marker::Panel {
            format: PANEL_FORMAT,
        },
        Marker::Plan {
            id: "p-12".into(),
            hash: "sha256:00ff".into(),
        },
        Marker::Plan {
            id: "odd id --> with = signs, %, and ünïcode".into(),
            hash: "sha256:ab".into(),
        },
        Marker::Reply {
            kind: ReplyKind::Refusal,
        },
        Marker::Reply {
            kind: ReplyKind::Help,
        },
    ];
    for m in markers {
        let body = format!("{m}\nrest of the comment");
        assert_eq!(parse_marker(&body), Some(m.clone()), "{body}");
        let rendered = m.to_string();
        assert_eq!(rendered.matches("-->").count(), 1, "{rendered}");
        assert!(
            !rendered[4..rendered.len() - 3].contains("--"),
            "{rendered}"
        );
    }
}

#[test]
fn panel_marker_reads_as_documented() {
    assert_eq!(
        parse_marker("<!-- navin:panel v=1 -->\n### 🧭"),
        Some(Marker::Panel { format: 1 })
    );
    assert_eq!(
        parse_marker("\r\n  <!-- navin:panel v=2 future=yes -->\r\nbody"),
        Some(Marker::Panel { format: 2 })
    );
}

#[test]
fn only_the_first_line_counts() {
    assert_eq!(parse_marker("hello\n<!-- navin:panel v=1 -->"), None);
    assert_eq!(parse_marker("> <!-- navin:panel v=1 -->"), None);
}

#[test]
fn malformed_markers_are_not_navins() {
    for body in [
        "",
        "<!-- navin:panel -->",
        "<!-- navin:panel v=x -->",
        "<!-- navin:unknown v=1 -->",
        "<!-- navin:plan id=p1 -->",
        "<!-- navin:plan id= hash=sha256:1 -->",
        "<!-- navin:reply kind=shout -->",
        "<!-- other:panel v=1 -->",
        "<!-- navin:panel v=1",
        "<!-- navin:plan id=%zz hash=h -->",
    ] {
        assert_eq!(parse_marker(body), None, "{body:?}");
    }
}
