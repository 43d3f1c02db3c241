//! The offline engine: no model, no network. It reads the failing tests' frames and callees
//! (`localise`), and tries one small change at a time on the best state so far (`operators`,
//! `templates`, the failure's own strings in `literals`, the error's own words in `errors`):
//! what the error names first, then the lines the tracebacks name, then the most likely
//! changes, each a whole-file edit that the loop validates like a model's. A change the loop
//! keeps (it fixed some tests and broke none) becomes the state the next changes start from,
//! so several one-line bugs are fixed in turn. Such a change may only have hidden part of the bug
//! (`n // 2` → `n // 3` passes one test, and the real fix, `sorted(values)`, then fails on top of
//! it): when nothing is left to try on the kept change, the earlier state's untried changes
//! follow, with the kept change undone. Candidates that do not parse, or were tried, are skipped
//! before any test runs. Once a change makes the tests pass, the next few at its place are its
//! alternatives: the other plausible patches.

mod errors;
mod literals;
mod localise;
mod operators;
mod templates;

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::hash::{Hash, Hasher};

use self::operators::Candidate;
use super::edits::{Edit, EditKind};
use super::tree::{Contents, Tree};
use super::{Context, Engine, Proposal, Proposed};
use crate::error::Failure;
use crate::syntax::{self, Lang};

/// Candidates generated for one state at most (the most suspicious places' first).
const PER_STATE: usize = 2000;

#[derive(Default)]
pub(crate) struct MutateEngine {
    queue: VecDeque<Candidate>,
    /// The state the queue was made for.
    made_for: Option<Contents>,
    /// The earlier states' candidates not yet tried, the latest last.
    earlier: Vec<(Contents, VecDeque<Candidate>)>,
    /// The states tried, by hash.
    tried: HashSet<u64>,
    /// The tier and place of the candidate last proposed, when it was made for the current state.
    last: Option<(u8, usize)>,
}

impl Engine for MutateEngine {
    fn name(&self) -> &'static str {
        "mutate"
    }

    fn searches(&self) -> bool {
        true
    }

    fn propose(&mut self, context: &Context, tree: &Tree) -> Result<Proposed, Failure> {
        let state = tree.contents();
        if self.made_for.as_ref() != Some(&state) {
            // The state itself is known: a candidate that makes it again is not tested.
            self.tried.insert(hash_of(&state));
            let left = std::mem::replace(&mut self.queue, generate(context, tree).into());
            if let Some(before) = self.made_for.replace(state.clone()) {
                if !left.is_empty() {
                    self.earlier.push((before, left));
                }
            }
        }
        loop {
            let (base, candidate) = match self.queue.pop_front() {
                Some(candidate) => (None, candidate),
                None => match self.earlier.last_mut() {
                    None => return Ok(Proposed::Exhausted),
                    Some((before, queue)) => match queue.pop_front() {
                        Some(candidate) => (Some(&*before), candidate),
                        None => {
                            self.earlier.pop();
                            continue;
                        }
                    },
                },
            };
            let Some(edits) = edits_of(tree, &state, base, &candidate) else {
                continue;
            };
            if !self
                .tried
                .insert(hash_of(&state_after(tree, &state, &edits)))
            {
                continue;
            }
            self.last = base.is_none().then_some((candidate.tier, candidate.place));
            return Ok(Proposed::Edits(proposal(&candidate, edits, base.is_some())));
        }
    }

    /// The candidates left at the last one's place, of its tier and after, on the state it was
    /// made for.
    fn alternatives(&mut self, tree: &Tree, at_most: usize) -> Vec<Proposal> {
        let (Some((tier, place)), Some(state)) = (self.last.take(), self.made_for.clone()) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let mut rest = VecDeque::new();
        while let Some(candidate) = self.queue.pop_front() {
            if found.len() == at_most || candidate.place != place || candidate.tier < tier {
                rest.push_back(candidate);
                continue;
            }
            let Some(edits) = edits_of(tree, &state, None, &candidate) else {
                continue;
            };
            if self
                .tried
                .insert(hash_of(&state_after(tree, &state, &edits)))
            {
                found.push(proposal(&candidate, edits, false));
            }
        }
        self.queue = rest;
        found
    }
}

/// The proposal of a candidate's edits; `undoing`: made on an earlier state.
fn proposal(candidate: &Candidate, edits: Vec<Edit>, undoing: bool) -> Proposal {
    let undoing = match undoing {
        true => ", in place of the change kept",
        false => "",
    };
    Proposal {
        edits,
        label: Some(format!(
            "{} at {}:{}{undoing}",
            candidate.description, candidate.path, candidate.line
        )),
        rank: Some((candidate.tier, candidate.place)),
        ..Proposal::default()
    }
}

/// The state `edits` make of `state`.
fn state_after(tree: &Tree, state: &Contents, edits: &[Edit]) -> Contents {
    let mut after = state.clone();
    for edit in edits {
        match tree.read_in(&Contents::new(), &edit.path) {
            Ok(Some(original)) if original == edit.replace => after.remove(&edit.path),
            _ => after.insert(edit.path.clone(), Some(edit.replace.clone())),
        };
    }
    after
}

fn hash_of(state: &Contents) -> u64 {
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    state.hash(&mut hash);
    hash.finish()
}

/// The whole-file edits that make `candidate`, found on `base` (an earlier state; none: the
/// current one), of the tree in `state`: on an earlier state, every file changed since is put
/// back too. None when the file changed under it or the change does not parse.
fn edits_of(
    tree: &Tree,
    state: &Contents,
    base: Option<&Contents>,
    candidate: &Candidate,
) -> Option<Vec<Edit>> {
    let base = base.unwrap_or(state);
    let text = tree.read_in(base, &candidate.path).ok()??;
    // The tests may have rewritten a file heal never wrote since the candidate was made.
    let changed = format!(
        "{}{}{}",
        text.get(..candidate.start)?,
        candidate.replacement,
        text.get(candidate.end..)?
    );
    if !Lang::of(&candidate.path).is_some_and(|lang| syntax::parses(lang, &changed)) {
        return None;
    }
    let whole = |path: &str, replace: String| Edit {
        path: path.to_string(),
        search: String::new(),
        replace,
        kind: EditKind::WholeFile,
    };
    let mut edits = vec![whole(&candidate.path, changed)];
    let since: BTreeSet<&String> = state.keys().chain(base.keys()).collect();
    for path in since {
        if *path == candidate.path {
            continue;
        }
        let then = tree.read_in(base, path).ok()?;
        if then != tree.read_in(state, path).ok()? {
            edits.push(whole(path, then?));
        }
    }
    Some(edits)
}

/// The candidates for the tree's current state: per suspicious region, most suspicious first,
/// each region's by tier; then all regions' lower tiers after every region's first.
fn generate(context: &Context, tree: &Tree) -> Vec<Candidate> {
    let spectrum = context.spectrum.map(|spectrum| spectrum.aligned(tree));
    let spectrum = spectrum.as_ref();
    let (regions, protected, frames) =
        localise::suspicious(context.failures, context.files, tree, spectrum);
    let differences = literals::differences(context.failures);
    let named = errors::named(context.failures);
    let mut per_region: Vec<Vec<Candidate>> = Vec::new();
    // What the error itself names (tier 1) comes before everything.
    let mut named_first = Vec::new();
    for (place, region) in regions.iter().enumerate() {
        let Some(lang) = Lang::of(&region.path) else {
            continue;
        };
        let Ok(Some(text)) = tree.read(&region.path) else {
            continue;
        };
        let Some(parsed) = syntax::parse(lang, &text) else {
            continue;
        };
        let guarded = protected.get(&region.path).map_or(&[][..], Vec::as_slice);
        let mut candidates = operators::candidates(
            &region.path,
            lang,
            &text,
            parsed.root_node(),
            (region.first, region.last),
            guarded,
        );
        candidates.extend(literals::candidates(
            &region.path,
            &text,
            parsed.root_node(),
            (region.first, region.last),
            guarded,
            &differences,
        ));
        if lang == Lang::Python {
            candidates.extend(literals::unanchored(
                &region.path,
                &text,
                parsed.root_node(),
                (region.first, region.last),
                guarded,
            ));
        }
        if matches!(
            lang,
            Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx
        ) {
            let lines: Vec<usize> = frames
                .iter()
                .filter(|(path, line)| {
                    *path == region.path && (region.first..=region.last).contains(line)
                })
                .map(|(_, line)| *line)
                .collect();
            let (first, later): (Vec<_>, Vec<_>) =
                errors::candidates(&region.path, &text, parsed.root_node(), &lines, &named)
                    .into_iter()
                    .partition(|c| c.tier == 1);
            named_first.extend(first.into_iter().map(|c| Candidate { place, ..c }));
            candidates.extend(later);
        }
        for candidate in &mut candidates {
            candidate.place = place;
        }
        if let Some(spectrum) = spectrum {
            // Within a tier, the lines most the failing tests ran and least the others first.
            let score = |c: &Candidate| spectrum.at(&c.path, c.line).unwrap_or(0.0);
            candidates.sort_by(|a, b| score(b).total_cmp(&score(a)));
        }
        per_region.push(candidates);
    }
    // Tier by tier across regions: a boundary operator in the second function comes before an
    // operand swap in the first.
    let mut ordered = Vec::new();
    for tier in 1..=7 {
        for candidates in &per_region {
            ordered.extend(candidates.iter().filter(|c| c.tier == tier).cloned());
        }
    }
    if let Some(spectrum) = spectrum {
        // A line no failing test ran (in a module they never imported, too) cannot be where
        // they went wrong, unless the bug is in code not there: its changes come last.
        let ran = |c: &Candidate| spectrum.at(&c.path, c.line).is_some_and(|s| s > 0.0);
        let (first, last): (Vec<_>, Vec<_>) = ordered.into_iter().partition(ran);
        ordered = first.into_iter().chain(last).collect();
    }
    // The lines the tracebacks name, where the failure happened or was called from, before
    // all others, but for deleting their statements (which hides any error).
    let framed =
        |c: &Candidate| c.tier < 7 && frames.iter().any(|(p, l)| *p == c.path && *l == c.line);
    let (first, last): (Vec<_>, Vec<_>) = ordered.into_iter().partition(framed);
    ordered = named_first.into_iter().chain(first).chain(last).collect();
    ordered.truncate(PER_STATE);
    ordered
}
