//! The embedded reference data as the generator uses it: the category tree flattened, with
//! the nodes of each top-level category by level, and for each town the list codes of the
//! service areas that cover it.

use std::collections::{HashMap, HashSet};

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::SampleError;
use super::towns::{list_code, towns};
use crate::input::files;
use crate::input::records::{CategoryRecord, ServiceAreaRecord};
use crate::input::writer::{CATEGORIES_JSON, SERVICE_AREAS_JSON};

/// One node of the category tree, flattened.
pub(super) struct Category {
    pub(super) slug: String,
    pub(super) name: String,
    /// Index into `Categories::tops`.
    pub(super) top: usize,
    /// The second-level node this one is under (itself at the top two levels).
    pub(super) branch: usize,
}

/// The nodes of one top-level category, by level.
pub(super) struct Top {
    pub(super) node: usize,
    pub(super) second: Vec<usize>,
    /// Third level and below.
    pub(super) deeper: Vec<usize>,
}

/// The embedded category tree, flattened depth-first.
pub(super) struct Categories {
    pub(super) all: Vec<Category>,
    pub(super) tops: Vec<Top>,
    /// For each node: itself and every node below it.
    pub(super) subtree: Vec<Vec<usize>>,
    pub(super) by_slug: HashMap<String, usize>,
}

impl Categories {
    pub(super) fn parse() -> Result<Self, SampleError> {
        let tree: Vec<CategoryRecord> = serde_json::from_str(CATEGORIES_JSON)
            .map_err(|e| SampleError::Embedded { file: files::CATEGORIES, message: e.to_string() })?;
        let mut cats = Categories { all: Vec::new(), tops: Vec::new(), subtree: Vec::new(), by_slug: HashMap::new() };
        for (t, root) in tree.iter().enumerate() {
            cats.tops.push(Top { node: cats.all.len(), second: Vec::new(), deeper: Vec::new() });
            cats.add(root, t, 0, None);
        }
        if cats.tops.is_empty() {
            return Err(SampleError::Embedded { file: files::CATEGORIES, message: "no categories".to_owned() });
        }
        Ok(cats)
    }

    fn add(&mut self, node: &CategoryRecord, top: usize, depth: usize, branch: Option<usize>) {
        let index = self.all.len();
        let branch = branch.unwrap_or(index);
        self.all.push(Category { slug: node.slug.clone(), name: node.name.clone(), top, branch });
        self.subtree.push(Vec::new());
        self.by_slug.insert(node.slug.clone(), index);
        match depth {
            0 => {}
            1 => self.tops[top].second.push(index),
            _ => self.tops[top].deeper.push(index),
        }
        for child in &node.sub_categories {
            // Children of the top level start their own branch.
            self.add(child, top, depth + 1, (depth > 0).then_some(branch));
        }
        // Depth-first order: the subtree is exactly the nodes added since this one.
        self.subtree[index] = (index..self.all.len()).collect();
    }

    /// One to three categories around one theme, from every level of the tree; the first
    /// is the one the service is named after. Most services of an organisation with a
    /// theme (a node of the tree) fall under it; the rest anywhere.
    pub(super) fn choose(&self, rng: &mut ChaCha8Rng, theme: Option<usize>) -> Vec<usize> {
        let themed = theme.filter(|_| rng.gen_bool(0.75));
        let top = match themed {
            Some(node) => &self.tops[self.all[node].top],
            None => &self.tops[rng.gen_range(0..self.tops.len())],
        };
        let below = |rng: &mut ChaCha8Rng| -> usize {
            let deep = !top.deeper.is_empty() && (top.second.is_empty() || rng.gen_bool(0.5));
            match (deep, top.second.choose(rng)) {
                (true, _) => top.deeper[rng.gen_range(0..top.deeper.len())],
                (false, Some(&n)) => n,
                (false, None) => top.node,
            }
        };
        let primary = match themed {
            Some(node) if node != top.node => {
                let under = &self.subtree[node];
                under[rng.gen_range(0..under.len())]
            }
            _ if rng.gen_bool(0.12) => top.node,
            _ => below(rng),
        };
        let mut chosen = vec![primary];
        // Editors often tag a leaf together with its top-level category.
        if primary != top.node && rng.gen_bool(0.2) {
            chosen.push(top.node);
        }
        if rng.gen_bool(0.3) {
            // Mostly a neighbour of the first in the tree, else anything under its top.
            let branch = &self.subtree[self.all[primary].branch];
            let other =
                if branch.len() > 1 && rng.gen_bool(0.6) { branch[rng.gen_range(0..branch.len())] } else { below(rng) };
            chosen.push(other);
        }
        if rng.gen_bool(0.08) {
            chosen.push(rng.gen_range(0..self.all.len()));
        }
        let mut seen = HashSet::new();
        chosen.retain(|c| seen.insert(*c));
        chosen.truncate(3);
        chosen
    }
}

/// The embedded service areas and, for each town, the list codes that cover it.
pub(super) struct Areas {
    /// For each town: council, health board, integration authority (list codes).
    pub(super) by_town: Vec<[String; 3]>,
    /// For each town: the list codes of the other councils in its health board.
    pub(super) neighbours: Vec<Vec<String>>,
}

impl Areas {
    pub(super) fn parse() -> Result<Self, SampleError> {
        let list: Vec<ServiceAreaRecord> = serde_json::from_str(SERVICE_AREAS_JSON)
            .map_err(|e| SampleError::Embedded { file: files::SERVICE_AREAS, message: e.to_string() })?;
        let known: HashSet<&str> = list.iter().map(|a| a.code.as_str()).collect();
        let mut by_town = Vec::with_capacity(towns().len());
        for town in towns() {
            let codes = [town.council, town.health_board, town.integration_authority].map(|c| list_code(c).to_owned());
            if let Some(missing) = codes.iter().find(|c| !known.contains(c.as_str())) {
                return Err(SampleError::Embedded {
                    file: files::SERVICE_AREAS,
                    message: format!("no area {missing} (for {})", town.name),
                });
            }
            by_town.push(codes);
        }
        for national in ["XS", "XB"] {
            if !known.contains(national) {
                return Err(SampleError::Embedded {
                    file: files::SERVICE_AREAS,
                    message: format!("no area {national}"),
                });
            }
        }
        let neighbours = by_town
            .iter()
            .map(|[council, board, _]| {
                let mut others: Vec<String> = Vec::new();
                for [c, b, _] in &by_town {
                    if b == board && c != council && !others.contains(c) {
                        others.push(c.clone());
                    }
                }
                others
            })
            .collect();
        Ok(Areas { by_town, neighbours })
    }
}
