//! A definition checked whole before anything runs: every problem at once, each naming the
//! node and the field. What it checks: ids and kinds, each kind's fields (the table of
//! `nodes/`), edges (dangling, self-loops, duplicates, `when` only after a `condition`), one
//! start node, nothing unreachable, no cycles (workflows are acyclic: repeated work is a
//! `parallel` fan-out, not a loop), fan-out only through `parallel` or `condition`, every
//! `join` below a `parallel`, templates that parse and read only declared inputs and nodes
//! that finish before them, and the budget's bounds. The result is a [`Graph`] the engine
//! runs without re-checking.

use std::collections::{HashMap, HashSet, VecDeque};

use super::def::{
    Budget, Issue, MAX_EDGES, MAX_NODES, MAX_STEPS, MAX_TIMEOUT_MS, WorkflowDef, is_valid_id,
};
use super::nodes::{CheckContext, FieldType, NodeConfig, NodeKind};
use super::template::{Root, Template, strings_in};

/// A checked workflow.
#[derive(Debug, Clone)]
pub struct Graph {
    /// The definition it was made from.
    pub def: WorkflowDef,
    /// The nodes, in definition order.
    pub nodes: Vec<Node>,
    /// The edges, in definition order.
    pub edges: Vec<Edge>,
    /// Per node, the indices of its incoming edges.
    pub incoming: Vec<Vec<usize>>,
    /// Per node, the indices of its outgoing edges.
    pub outgoing: Vec<Vec<usize>>,
    /// The node a run starts at.
    pub start: usize,
}

/// A checked node.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its id.
    pub id: String,
    /// Its typed configuration.
    pub config: NodeConfig,
}

/// A checked edge, by node index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The node it leaves.
    pub from: usize,
    /// The node it enters.
    pub to: usize,
    /// The `condition` value that takes it (`None`: the default edge, or any edge of a
    /// node that is not a condition).
    pub when: Option<String>,
}

impl Graph {
    /// The index of the node `id`.
    pub fn index(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// The run's budget.
    pub fn budget(&self) -> Budget {
        self.def.budget
    }
}

/// Checks `def`; the graph, or every problem found.
pub fn validate(def: &WorkflowDef, cx: &CheckContext) -> Result<Graph, Vec<Issue>> {
    let mut issues = Vec::new();
    if def.name.trim().is_empty() {
        issues.push(Issue::workflow("name", "must not be empty"));
    }
    if let Some(id) = &def.id
        && !is_valid_id(id)
    {
        issues.push(Issue::workflow("id", "1-64 letters, digits, `_` or `-`"));
    }
    check_inputs(def, &mut issues);
    check_budget(&def.budget, &mut issues);
    if def.nodes.is_empty() {
        issues.push(Issue::workflow("nodes", "a workflow needs at least one node"));
    }
    if def.nodes.len() > MAX_NODES {
        issues.push(Issue::workflow(
            "nodes",
            format!("{} nodes; a workflow may have at most {MAX_NODES}", def.nodes.len()),
        ));
    }
    if def.edges.len() > MAX_EDGES {
        issues.push(Issue::workflow(
            "edges",
            format!("{} edges; a workflow may have at most {MAX_EDGES}", def.edges.len()),
        ));
    }

    // Nodes: ids, kinds, fields.
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut configs: Vec<Option<NodeConfig>> = Vec::with_capacity(def.nodes.len());
    let kinds: Vec<&str> = NodeKind::ALL.iter().map(|k| k.name()).collect();
    for (i, node) in def.nodes.iter().enumerate() {
        if !is_valid_id(&node.id) {
            issues.push(Issue::node(&node.id, "id", "1-64 letters, digits, `_` or `-`"));
        } else if index.insert(node.id.as_str(), i).is_some() {
            issues.push(Issue::node(&node.id, "id", "another node has this id"));
        }
        let Some(kind) = NodeKind::parse(&node.kind) else {
            let hint = base::text::closest(&node.kind, &kinds);
            let hint = hint.first().map(|h| format!("; did you mean `{h}`?")).unwrap_or_default();
            issues.push(Issue::node(
                &node.id,
                "type",
                format!("unknown node type `{}` (types: {}){hint}", node.kind, kinds.join(", ")),
            ));
            configs.push(None);
            continue;
        };
        match NodeConfig::from_map(kind, &node.config, cx) {
            Ok(c) => configs.push(Some(c)),
            Err(problems) => {
                for (field, message) in problems {
                    issues.push(Issue::node(&node.id, field, message));
                }
                configs.push(None);
            }
        }
    }
    let kind_of = |i: usize| NodeKind::parse(&def.nodes[i].kind);

    // Edges.
    let n = def.nodes.len();
    let mut edges = Vec::new();
    let mut edge_field = Vec::new();
    let mut seen = HashSet::new();
    for (i, e) in def.edges.iter().enumerate() {
        let from = index.get(e.from.as_str()).copied();
        let to = index.get(e.to.as_str()).copied();
        for (end, name, found) in [("from", &e.from, from), ("to", &e.to, to)] {
            if found.is_none() {
                issues.push(Issue::workflow(
                    format!("edges[{i}].{end}"),
                    format!("no node `{name}`"),
                ));
            }
        }
        let (Some(from), Some(to)) = (from, to) else { continue };
        if from == to {
            issues.push(Issue::node(
                &e.from,
                format!("edges[{i}]"),
                "an edge from a node to itself",
            ));
            continue;
        }
        if !seen.insert((from, to, e.when.clone())) {
            issues.push(Issue::node(&e.from, format!("edges[{i}]"), "a duplicate edge"));
            continue;
        }
        if e.when.is_some() && kind_of(from) != Some(NodeKind::Condition) {
            issues.push(Issue::node(
                &e.from,
                format!("edges[{i}].when"),
                "only the edges of a `condition` node take `when`",
            ));
        }
        edges.push(Edge { from, to, when: e.when.as_ref().map(|w| w.trim().to_owned()) });
        edge_field.push(i);
    }
    let mut incoming = vec![Vec::new(); n];
    let mut outgoing = vec![Vec::new(); n];
    for (k, e) in edges.iter().enumerate() {
        outgoing[e.from].push(k);
        incoming[e.to].push(k);
    }

    // One start, everything reachable, no cycle.
    let starts: Vec<usize> = (0..n).filter(|&i| incoming[i].is_empty()).collect();
    let start = starts.first().copied().unwrap_or(0);
    if n > 0 && starts.is_empty() {
        issues.push(Issue::workflow(
            "edges",
            "every node has an incoming edge: a run needs one start node without any",
        ));
    }
    for &other in starts.iter().skip(1) {
        issues.push(Issue::node(
            &def.nodes[other].id,
            "id",
            format!(
                "unreachable: no edge leads to it (a run starts at `{}`, the first node \
                 without incoming edges)",
                def.nodes[start].id
            ),
        ));
    }
    let reachable = reach(start, &edges, &outgoing, n);
    for (i, &seen) in reachable.iter().enumerate() {
        if !seen && !starts.contains(&i) {
            issues.push(Issue::node(
                &def.nodes[i].id,
                "id",
                format!("unreachable from the start node `{}`", def.nodes[start].id),
            ));
        }
    }
    if let Some((k, path)) = find_cycle(&edges, &outgoing, n) {
        let names: Vec<&str> = path.iter().map(|&i| def.nodes[i].id.as_str()).collect();
        issues.push(Issue::node(
            &def.nodes[edges[k].from].id,
            format!("edges[{}]", edge_field[k]),
            format!(
                "closes the cycle {}: workflows are acyclic (fan work out with `parallel` \
                 instead of looping)",
                names.join(" → ")
            ),
        ));
    }

    // Fan-out and fan-in.
    for (i, out_edges) in outgoing.iter().enumerate() {
        let id = &def.nodes[i].id;
        let out = out_edges.len();
        match kind_of(i) {
            Some(NodeKind::Parallel) if out < 2 => issues.push(Issue::node(
                id,
                "edges",
                format!("a `parallel` node needs at least 2 outgoing edges (has {out})"),
            )),
            Some(NodeKind::Condition) => {
                if out == 0 {
                    issues.push(Issue::node(
                        id,
                        "edges",
                        "a `condition` node needs outgoing edges",
                    ));
                }
                let defaults = outgoing[i].iter().filter(|&&k| edges[k].when.is_none()).count();
                if defaults > 1 {
                    issues.push(Issue::node(
                        id,
                        "edges",
                        "more than one outgoing edge without `when` (at most one default)",
                    ));
                }
                let mut whens = HashSet::new();
                for &k in &outgoing[i] {
                    if let Some(w) = &edges[k].when
                        && !whens.insert(w.as_str())
                    {
                        issues.push(Issue::node(
                            id,
                            format!("edges[{}].when", edge_field[k]),
                            format!("another edge of this condition has `when` `{w}`"),
                        ));
                    }
                }
            }
            Some(NodeKind::Parallel) | None => {}
            Some(_) if out > 1 => issues.push(Issue::node(
                id,
                "edges",
                format!("fans out to {out} nodes: start branches with a `parallel` node"),
            )),
            Some(_) => {}
        }
    }
    let ancestors: Vec<HashSet<usize>> =
        (0..n).map(|i| ancestors_of(i, &edges, &incoming)).collect();
    for i in 0..n {
        if kind_of(i) == Some(NodeKind::Join) {
            let id = &def.nodes[i].id;
            if incoming[i].len() < 2 {
                issues.push(Issue::node(id, "edges", "a `join` needs at least 2 incoming edges"));
            }
            if !ancestors[i].iter().any(|&a| kind_of(a) == Some(NodeKind::Parallel)) {
                issues.push(Issue::node(
                    id,
                    "type",
                    "a `join` without a matching `parallel` before it",
                ));
            }
        }
    }

    // Templates.
    for (i, node) in def.nodes.iter().enumerate() {
        let Some(kind) = kind_of(i) else { continue };
        for (field, value) in NodeConfig::template_fields(&node.config, kind) {
            let mut strings = Vec::new();
            let is_json = kind.fields().iter().any(|f| f.name == field && f.ty == FieldType::Json);
            if is_json {
                strings_in(&field, value, &mut strings);
            } else if let Some(s) = value.as_str() {
                strings.push((field.clone(), s));
            }
            for (path, text) in strings {
                let template = match Template::parse(text) {
                    Ok(t) => t,
                    Err(e) => {
                        issues.push(Issue::node(&node.id, path, format!("template {e}")));
                        continue;
                    }
                };
                for r in template.refs() {
                    let problem = match &r.root {
                        Root::Input(name) if !def.inputs.contains_key(name) => {
                            Some(format!("`{{{{{r}}}}}`: no input `{name}` is declared"))
                        }
                        Root::Node(other) => match index.get(other.as_str()) {
                            None => Some(format!("`{{{{{r}}}}}`: no node `{other}`")),
                            Some(&j) if !ancestors[i].contains(&j) => Some(format!(
                                "`{{{{{r}}}}}`: node `{other}` does not run before `{}` \
                                 (no path of edges leads from it here)",
                                node.id
                            )),
                            Some(_) => None,
                        },
                        Root::Input(_) => None,
                    };
                    if let Some(message) = problem {
                        issues.push(Issue::node(&node.id, path.clone(), message));
                    }
                }
            }
        }
    }

    if !issues.is_empty() {
        return Err(issues);
    }
    let nodes = def
        .nodes
        .iter()
        .zip(configs)
        .filter_map(|(d, c)| Some(Node { id: d.id.clone(), config: c? }))
        .collect();
    Ok(Graph { def: def.clone(), nodes, edges, incoming, outgoing, start })
}

fn check_inputs(def: &WorkflowDef, issues: &mut Vec<Issue>) {
    for (name, decl) in &def.inputs {
        if !is_valid_id(name) {
            issues.push(Issue::workflow(
                format!("inputs.{name}"),
                "1-64 letters, digits, `_` or `-`",
            ));
        }
        if let Some(d) = &decl.default
            && !decl.ty.accepts(d)
        {
            issues.push(Issue::workflow(
                format!("inputs.{name}.default"),
                format!("must be of the input's type {}", decl.ty.as_str()),
            ));
        }
    }
}

fn check_budget(b: &Budget, issues: &mut Vec<Issue>) {
    if b.max_steps == 0 || b.max_steps > MAX_STEPS {
        issues.push(Issue::workflow("budget.maxSteps", format!("must be 1..={MAX_STEPS}")));
    }
    if b.timeout_ms == 0 || b.timeout_ms > MAX_TIMEOUT_MS {
        issues.push(Issue::workflow("budget.timeoutMs", format!("must be 1..={MAX_TIMEOUT_MS}")));
    }
    if b.max_tokens == Some(0) {
        issues.push(Issue::workflow("budget.maxTokens", "must be positive"));
    }
}

fn reach(start: usize, edges: &[Edge], outgoing: &[Vec<usize>], n: usize) -> Vec<bool> {
    let mut seen = vec![false; n];
    if n == 0 {
        return seen;
    }
    let mut queue = VecDeque::from([start]);
    seen[start] = true;
    while let Some(i) = queue.pop_front() {
        for &k in &outgoing[i] {
            let to = edges[k].to;
            if !seen[to] {
                seen[to] = true;
                queue.push_back(to);
            }
        }
    }
    seen
}

/// Every node with a path of edges to `node`.
fn ancestors_of(node: usize, edges: &[Edge], incoming: &[Vec<usize>]) -> HashSet<usize> {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([node]);
    while let Some(i) = queue.pop_front() {
        for &k in &incoming[i] {
            let from = edges[k].from;
            if seen.insert(from) {
                queue.push_back(from);
            }
        }
    }
    seen.remove(&node);
    seen
}

/// The edge closing a cycle and the cycle's nodes (first node repeated at the end).
fn find_cycle(edges: &[Edge], outgoing: &[Vec<usize>], n: usize) -> Option<(usize, Vec<usize>)> {
    // 0 = unvisited, 1 = on the stack, 2 = done. Iterative DFS (no recursion on user input).
    let mut color = vec![0u8; n];
    let mut parent_edge: Vec<Option<usize>> = vec![None; n];
    for root in 0..n {
        if color[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        color[root] = 1;
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            if let Some(&k) = outgoing[i].get(*next) {
                *next += 1;
                let to = edges[k].to;
                match color[to] {
                    0 => {
                        color[to] = 1;
                        parent_edge[to] = Some(k);
                        stack.push((to, 0));
                    }
                    1 => {
                        // Walk back from `i` to `to` along the DFS tree, then read it forwards.
                        let mut chain = Vec::new();
                        let mut at = i;
                        while at != to {
                            chain.push(at);
                            at = parent_edge[at].map_or(to, |e| edges[e].from);
                        }
                        chain.reverse();
                        let mut path = vec![to];
                        path.extend(chain);
                        path.push(to);
                        return Some((k, path));
                    }
                    _ => {}
                }
            } else {
                color[i] = 2;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::def::parse;

    fn cx() -> CheckContext {
        CheckContext {
            tools: vec!["get_state".into()],
            agents: vec!["dashboard".into()],
            knowledge_bases: vec![("kb_1".into(), "research".into())],
        }
    }

    fn check(v: Value) -> Result<Graph, Vec<Issue>> {
        validate(&parse(&v.to_string()).unwrap(), &cx())
    }

    fn fields(issues: &[Issue]) -> Vec<(Option<&str>, &str)> {
        issues.iter().map(|i| (i.node.as_deref(), i.field.as_str())).collect()
    }

    #[test]
    fn a_fan_out_and_join_validates() {
        let g = check(json!({
            "name": "ok",
            "inputs": {"topic": {"type": "string"}},
            "nodes": [
                {"id": "p", "type": "parallel"},
                {"id": "a", "type": "llm", "prompt": "{{inputs.topic}} a"},
                {"id": "b", "type": "code", "code": "return vars.x", "inputs": {"x": "{{inputs.topic}}"}},
                {"id": "j", "type": "join"},
                {"id": "w", "type": "llm", "prompt": "{{nodes.j.output.a}} {{nodes.b.output}}"}
            ],
            "edges": [
                {"from": "p", "to": "a"}, {"from": "p", "to": "b"},
                {"from": "a", "to": "j"}, {"from": "b", "to": "j"}, {"from": "j", "to": "w"}
            ]
        }))
        .unwrap();
        assert_eq!(g.start, 0);
        assert_eq!(g.nodes.len(), 5);
        assert_eq!(g.incoming[3].len(), 2);
    }

    #[test]
    fn every_problem_is_reported_at_once_naming_node_and_field() {
        let issues = check(json!({
            "name": "",
            "inputs": {"n": {"type": "integer", "default": "x"}},
            "nodes": [
                {"id": "a", "type": "llm", "prompt": "{{inputs.missing}} {{nodes.c.output}}", "temprature": 1},
                {"id": "b", "type": "lmm"},
                {"id": "c", "type": "tool", "tool": "nope"},
                {"id": "d", "type": "join"},
                {"id": "e", "type": "code"}
            ],
            "edges": [{"from": "a", "to": "c"}, {"from": "c", "to": "zz"}, {"from": "a", "to": "d", "when": "x"}],
            "budget": {"maxSteps": 0}
        }))
        .unwrap_err();
        let f = fields(&issues);
        for expected in [
            (None, "name"),
            (None, "inputs.n.default"),
            (None, "budget.maxSteps"),
            (Some("a"), "temprature"),
            (Some("b"), "type"),
            (Some("c"), "tool"),
            (Some("e"), "code"),
            (None, "edges[1].to"),
            (Some("a"), "edges[2].when"),
            (Some("a"), "edges"),
            (Some("d"), "type"),
            (Some("a"), "prompt"),
        ] {
            assert!(f.contains(&expected), "{expected:?} missing from {issues:#?}");
        }
        let prompt: Vec<&Issue> = issues.iter().filter(|i| i.field == "prompt").collect();
        assert!(prompt.iter().any(|i| i.message.contains("no input `missing`")), "{prompt:?}");
        assert!(prompt.iter().any(|i| i.message.contains("does not run before `a`")), "{prompt:?}");
        let typo = issues.iter().find(|i| i.field == "temprature").unwrap();
        assert!(
            typo.message.contains("did you mean `temperature`")
                || typo.message.contains("not a field"),
            "{typo:?}"
        );
        let b = issues.iter().find(|i| i.node.as_deref() == Some("b")).unwrap();
        assert!(b.message.contains("did you mean `llm`"), "{b:?}");
    }

    #[test]
    fn cycles_and_unreachable_nodes_are_refused() {
        let issues = check(json!({
            "name": "loop",
            "nodes": [
                {"id": "s", "type": "code", "code": "return 1"},
                {"id": "a", "type": "code", "code": "return 1"},
                {"id": "b", "type": "code", "code": "return 1"},
                {"id": "x", "type": "code", "code": "return 1"}
            ],
            "edges": [{"from": "s", "to": "a"}, {"from": "a", "to": "b"}, {"from": "b", "to": "a"}]
        }))
        .unwrap_err();
        let cycle = issues.iter().find(|i| i.message.contains("cycle")).unwrap();
        assert_eq!(cycle.field, "edges[2]");
        assert!(cycle.message.contains("a → b → a"), "{cycle:?}");
        assert!(
            issues
                .iter()
                .any(|i| i.node.as_deref() == Some("x") && i.message.contains("unreachable"))
        );
    }

    #[test]
    fn conditions_own_their_whens_and_fan_out_needs_parallel() {
        let issues = check(json!({
            "name": "c",
            "nodes": [
                {"id": "s", "type": "condition", "value": "{{inputs.x}}"},
                {"id": "a", "type": "code", "code": "return 1"},
                {"id": "b", "type": "code", "code": "return 1"},
                {"id": "c", "type": "code", "code": "return 1"},
                {"id": "p", "type": "parallel"}
            ],
            "inputs": {"x": {}},
            "edges": [
                {"from": "s", "to": "a", "when": "yes"}, {"from": "s", "to": "b", "when": "yes"},
                {"from": "s", "to": "p"},
                {"from": "a", "to": "c"}, {"from": "b", "to": "c"},
                {"from": "p", "to": "c"}
            ]
        }))
        .unwrap_err();
        let f = fields(&issues);
        assert!(f.contains(&(Some("s"), "edges[1].when")), "{issues:#?}");
        assert!(f.contains(&(Some("p"), "edges")), "{issues:#?}");
    }
}
