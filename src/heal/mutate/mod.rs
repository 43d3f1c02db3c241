//! The offline engine: no model, no network. It reads the failing tests' frames and callees
//! (`localise`), and tries one small change at a time on the best state so far (`operators`),
//! most likely first: each a whole-file edit that the loop validates like a model's. A change the
//! loop keeps (it fixed some tests and broke none) becomes the state the next changes start from,
//! so several one-line bugs are fixed in turn. Candidates that do not parse, or were tried, are
//! skipped before any test runs.

mod localise;
mod operators;
mod templates;

use std::collections::{HashSet, VecDeque};
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
pub struct MutateEngine {
    queue: VecDeque<Candidate>,
    /// The state the queue was made for.
    made_for: Option<Contents>,
    /// The file texts tried, by hash.
    tried: HashSet<u64>,
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
            self.queue = generate(context, tree).into();
            self.made_for = Some(state);
        }
        while let Some(candidate) = self.queue.pop_front() {
            let Ok(Some(text)) = tree.read(&candidate.path) else {
                continue;
            };
            if candidate.end > text.len() {
                continue;
            }
            let changed = format!(
                "{}{}{}",
                &text[..candidate.start],
                candidate.replacement,
                &text[candidate.end..]
            );
            let mut hash = std::collections::hash_map::DefaultHasher::new();
            (&candidate.path, &changed).hash(&mut hash);
            if !self.tried.insert(hash.finish()) {
                continue;
            }
            if !Lang::of(&candidate.path).is_some_and(|lang| syntax::parses(lang, &changed)) {
                continue;
            }
            return Ok(Proposed::Edits(Proposal {
                edits: vec![Edit {
                    path: candidate.path.clone(),
                    search: String::new(),
                    replace: changed,
                    kind: EditKind::WholeFile,
                }],
                label: Some(format!(
                    "{} at {}:{}",
                    candidate.description, candidate.path, candidate.line
                )),
                ..Proposal::default()
            }));
        }
        Ok(Proposed::Exhausted)
    }
}

/// The candidates for the tree's current state: per suspicious region, most suspicious first,
/// each region's by tier; then all regions' lower tiers after every region's first.
fn generate(context: &Context, tree: &Tree) -> Vec<Candidate> {
    let (regions, protected) = localise::suspicious(context.failures, context.files, tree);
    let mut per_region: Vec<Vec<Candidate>> = Vec::new();
    for region in &regions {
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
        per_region.push(operators::candidates(
            &region.path,
            lang,
            &text,
            parsed.root_node(),
            (region.first, region.last),
            guarded,
        ));
    }
    // Tier by tier across regions: a boundary operator in the second function comes before an
    // operand swap in the first.
    let mut ordered = Vec::new();
    for tier in 1..=7 {
        for candidates in &per_region {
            ordered.extend(candidates.iter().filter(|c| c.tier == tier).cloned());
        }
    }
    ordered.truncate(PER_STATE);
    ordered
}
