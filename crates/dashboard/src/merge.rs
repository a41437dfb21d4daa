//! Three-way merges of dashboard states, for drafts (review mode): a draft is a `base` state
//! and the `draft` made from it; meanwhile the published `head` may have moved on. Accepting
//! carries the draft's changes (all, or some panels') onto the head, keeping what others
//! changed elsewhere; rejecting some panels takes them back to the base in the draft.
//!
//! Panels are matched by id. A panel is *changed* when it was added, removed or differs in
//! any field (code, title, type, layout, ...) between base and draft. Dashboard-level fields
//! (title, layout, variables, refresh, alert rules) travel only with a whole accept.

use std::collections::HashMap;

use super::{DashboardState, Panel};

/// The panels changed from `base` to `draft`: added or modified (in draft order), then removed
/// (in base order).
pub fn changed_panels(base: &DashboardState, draft: &DashboardState) -> Vec<String> {
    let olds: HashMap<&str, &Panel> = base.panels.iter().map(|p| (p.id.as_str(), p)).collect();
    let news: HashMap<&str, &Panel> = draft.panels.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut out: Vec<String> = draft
        .panels
        .iter()
        .filter(|p| olds.get(p.id.as_str()).is_none_or(|o| *o != *p))
        .map(|p| p.id.clone())
        .collect();
    out.extend(
        base.panels.iter().filter(|p| !news.contains_key(p.id.as_str())).map(|p| p.id.clone()),
    );
    out
}

/// Whether the dashboard-level fields (title, grid, variables, refresh, alerts) differ.
pub fn top_changed(base: &DashboardState, draft: &DashboardState) -> bool {
    base.title != draft.title
        || base.layout != draft.layout
        || base.variables != draft.variables
        || base.refresh != draft.refresh
        || base.alerts != draft.alerts
}

/// `head` with the draft's changes to `panels` (`None`: every changed panel, the
/// dashboard-level fields and, when the draft reordered panels, its order) carried over. Panels others changed in
/// `head` and the draft did not touch stay as they are in `head`; a selected panel the draft
/// changed replaces head's (the draft's reviewer chose it).
pub fn apply(
    head: &DashboardState,
    base: &DashboardState,
    draft: &DashboardState,
    panels: Option<&[String]>,
) -> DashboardState {
    let changed = changed_panels(base, draft);
    let selected: Vec<&String> = match panels {
        Some(ids) => changed.iter().filter(|c| ids.contains(c)).collect(),
        None => changed.iter().collect(),
    };
    let mut out = head.clone();
    let whole = panels.is_none();
    if whole {
        if base.title != draft.title {
            out.title.clone_from(&draft.title);
        }
        if base.layout != draft.layout {
            out.layout = draft.layout.clone();
        }
        if base.variables != draft.variables {
            out.variables.clone_from(&draft.variables);
        }
        if base.refresh != draft.refresh {
            out.refresh.clone_from(&draft.refresh);
        }
        if base.alerts != draft.alerts {
            out.alerts.clone_from(&draft.alerts);
        }
    }
    for id in selected {
        match draft.panels.iter().position(|p| &p.id == id) {
            Some(at) => place(&mut out, &draft.panels, at),
            None => out.panels.retain(|p| &p.id != id),
        }
    }
    if whole && reordered(base, draft) {
        follow_order(&mut out, draft);
    }
    out
}

/// Whether the panels `base` and `draft` share are in another order in the draft.
fn reordered(base: &DashboardState, draft: &DashboardState) -> bool {
    let shared = |a: &DashboardState, b: &DashboardState| -> Vec<String> {
        a.panels
            .iter()
            .filter(|p| b.panels.iter().any(|q| q.id == p.id))
            .map(|p| p.id.clone())
            .collect()
    };
    shared(base, draft) != shared(draft, base)
}

/// `draft` with `panels` taken back to how they are in `base`: an added panel leaves, a
/// removed one comes back (after the nearest panel before it in the base), a modified one is
/// the base's again.
pub fn revert(base: &DashboardState, draft: &DashboardState, panels: &[String]) -> DashboardState {
    let mut out = draft.clone();
    for id in panels {
        match base.panels.iter().position(|p| &p.id == id) {
            Some(at) => place(&mut out, &base.panels, at),
            None => out.panels.retain(|p| &p.id != id),
        }
    }
    out
}

/// Puts `from[at]` into `out`: in place of the panel with its id, else after the nearest
/// panel before it in `from` that `out` has (first when none).
fn place(out: &mut DashboardState, from: &[Panel], at: usize) {
    let panel = from[at].clone();
    if let Some(i) = out.panels.iter().position(|p| p.id == panel.id) {
        out.panels[i] = panel;
    } else {
        let after = from[..at]
            .iter()
            .rev()
            .find_map(|prev| out.panels.iter().position(|p| p.id == prev.id));
        out.panels.insert(after.map_or(0, |i| i + 1), panel);
    }
}

/// Puts the panels of `out` that `order` has in `order`'s relative order, in the places such
/// panels hold in `out` (the others stay where they are).
fn follow_order(out: &mut DashboardState, order: &DashboardState) {
    let rank: HashMap<&str, usize> =
        order.panels.iter().enumerate().map(|(i, p)| (p.id.as_str(), i)).collect();
    let slots: Vec<usize> =
        (0..out.panels.len()).filter(|&i| rank.contains_key(out.panels[i].id.as_str())).collect();
    let mut moving: Vec<Panel> = slots.iter().map(|&i| out.panels[i].clone()).collect();
    moving.sort_by_key(|p| rank[p.id.as_str()]);
    for (slot, panel) in slots.into_iter().zip(moving) {
        out.panels[slot] = panel;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{Layout, PanelLayout, PanelType};
    use proptest::prelude::*;

    fn panel(id: &str, code: &str, w: u32) -> Panel {
        Panel {
            id: id.into(),
            title: format!("Panel {id}"),
            kind: PanelType::Line,
            renderer: PanelType::Line.renderer(),
            code: code.into(),
            indicators: None,
            config: None,
            data_source: None,
            layout: Some(PanelLayout { w, h: 3 }),
            refresh: None,
        }
    }

    fn state(title: &str, panels: Vec<Panel>) -> DashboardState {
        DashboardState {
            title: title.into(),
            layout: Layout { columns: 12, gap: None },
            panels,
            variables: Vec::new(),
            refresh: None,
            alerts: Vec::new(),
        }
    }

    fn ids(s: &DashboardState) -> Vec<&str> {
        s.panels.iter().map(|p| p.id.as_str()).collect()
    }

    #[test]
    fn accepting_one_panel_keeps_what_others_changed_meanwhile() {
        let base = state("T", vec![panel("a", "1", 6), panel("b", "1", 6)]);
        let draft = state("T2", vec![panel("a", "2", 6), panel("b", "2", 6), panel("c", "1", 4)]);
        // Someone else changed b's width and added d after the draft began.
        let head = state("T", vec![panel("a", "1", 6), panel("b", "1", 12), panel("d", "1", 3)]);
        let out = apply(&head, &base, &draft, Some(&["a".into(), "c".into()]));
        // c goes after b, the panel before it in the draft; d, added meanwhile, stays.
        assert_eq!(ids(&out), ["a", "b", "c", "d"]);
        assert_eq!(out.panels[0].code, "2");
        assert_eq!(out.panels[1], head.panels[1], "b is not selected: head's stays");
        assert_eq!(out.title, "T", "the title travels only with a whole accept");
        let whole = apply(&head, &base, &draft, None);
        assert_eq!(whole.title, "T2");
        assert_eq!(whole.panels[1].code, "2");
    }

    #[test]
    fn a_removed_panel_goes_and_reverting_brings_it_back_in_place() {
        let base = state("T", vec![panel("a", "1", 6), panel("b", "1", 6), panel("c", "1", 6)]);
        let draft = state("T", vec![panel("a", "1", 6), panel("c", "9", 6)]);
        assert_eq!(changed_panels(&base, &draft), ["c", "b"]);
        let out = apply(&base, &base, &draft, Some(&["b".into()]));
        assert_eq!(ids(&out), ["a", "c"]);
        assert_eq!(out.panels[1].code, "1", "c was not selected");
        let back = revert(&base, &draft, &["b".into()]);
        assert_eq!(ids(&back), ["a", "b", "c"]);
        assert_eq!(back.panels[2].code, "9", "c's change stays in the draft");
    }

    fn arb_state() -> impl Strategy<Value = DashboardState> {
        let panel_strategy = (0u8..6, 0u8..3, 1u32..13)
            .prop_map(|(id, code, w)| panel(&format!("p{id}"), &format!("return {code};"), w));
        (prop::collection::vec(panel_strategy, 0..6), 0u8..2).prop_map(|(panels, t)| {
            let mut seen = std::collections::HashSet::new();
            let panels = panels.into_iter().filter(|p| seen.insert(p.id.clone())).collect();
            state(&format!("T{t}"), panels)
        })
    }

    proptest! {
        #[test]
        fn a_whole_accept_on_an_unmoved_head_is_the_draft(base in arb_state(), draft in arb_state()) {
            prop_assert_eq!(apply(&base, &base, &draft, None), draft);
        }

        #[test]
        fn a_draft_equal_to_its_base_changes_nothing(head in arb_state(), base in arb_state()) {
            prop_assert!(changed_panels(&base, &base).is_empty());
            prop_assert_eq!(apply(&head, &base, &base, None), head);
        }

        #[test]
        fn reverting_every_changed_panel_leaves_no_panel_change(base in arb_state(), draft in arb_state()) {
            let back = revert(&base, &draft, &changed_panels(&base, &draft));
            prop_assert!(changed_panels(&base, &back).is_empty(), "{:?}", changed_panels(&base, &back));
        }

        #[test]
        fn accepting_in_parts_equals_accepting_panels_at_once(base in arb_state(), draft in arb_state()) {
            let changed = changed_panels(&base, &draft);
            let (first, rest) = changed.split_at(changed.len() / 2);
            let step = apply(&base, &base, &draft, Some(first));
            let two = apply(&step, &base, &draft, Some(rest));
            let once = apply(&base, &base, &draft, Some(&changed));
            let mut a: Vec<_> = two.panels.clone();
            let mut b: Vec<_> = once.panels.clone();
            a.sort_by(|x, y| x.id.cmp(&y.id));
            b.sort_by(|x, y| x.id.cmp(&y.id));
            prop_assert_eq!(a, b);
        }
    }
}
