//! The category tree: depth-first order, v3 ids, ancestry and descendants.

use serde::{Deserialize, Serialize};

use super::CategoryIx;

/// One category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    /// The v3 integer id (given, or assigned depth-first).
    pub id: u32,
    /// Human-readable name.
    pub name: String,
    /// Unique slug.
    pub slug: String,
    /// Parent, `None` at the top level.
    pub parent: Option<CategoryIx>,
    /// Children, in input order.
    pub children: Vec<CategoryIx>,
    /// One past the last node of this node's subtree: nodes are in depth-first order, so
    /// the descendants of `i` are exactly `i + 1 .. subtree_end`.
    pub subtree_end: CategoryIx,
}

/// The whole tree, nodes in depth-first (pre-)order of the input file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CategoryTree {
    /// Every node.
    pub nodes: Vec<Category>,
    /// Top-level nodes, in input order.
    pub roots: Vec<CategoryIx>,
}

/// A node of the input tree before ids are assigned.
#[derive(Debug, Clone)]
pub struct CategoryInput {
    /// Given v3 id, if any.
    pub id: Option<u32>,
    /// Name.
    pub name: String,
    /// Slug.
    pub slug: String,
    /// Children.
    pub children: Vec<CategoryInput>,
}

impl CategoryTree {
    /// Flattens the input tree depth-first and assigns missing ids: counting from 1 in
    /// depth-first order, skipping ids already given (input-format.md). Uniqueness of
    /// slugs and given ids is checked by `validate`, not here.
    pub fn build(roots: &[CategoryInput]) -> CategoryTree {
        let mut tree = CategoryTree::default();
        for root in roots {
            let ix = tree.push(root, None);
            tree.roots.push(ix);
        }
        let used: std::collections::HashSet<u32> = tree.nodes.iter().map(|n| n.id).collect();
        let mut next = 1;
        for node in tree.nodes.iter_mut().filter(|n| n.id == 0) {
            while used.contains(&next) {
                next += 1;
            }
            node.id = next;
            next += 1;
        }
        tree
    }

    fn push(&mut self, input: &CategoryInput, parent: Option<CategoryIx>) -> CategoryIx {
        let ix = self.nodes.len() as CategoryIx;
        self.nodes.push(Category {
            // 0 marks "to assign": given ids are validated to be at least 1.
            id: input.id.unwrap_or(0),
            name: input.name.clone(),
            slug: input.slug.clone(),
            parent,
            children: Vec::new(),
            subtree_end: 0,
        });
        for child in &input.children {
            let child_ix = self.push(child, Some(ix));
            self.nodes[ix as usize].children.push(child_ix);
        }
        self.nodes[ix as usize].subtree_end = self.nodes.len() as CategoryIx;
        ix
    }

    /// The node with this slug.
    pub fn by_slug(&self, slug: &str) -> Option<CategoryIx> {
        self.nodes.iter().position(|n| n.slug == slug).map(|ix| ix as CategoryIx)
    }

    /// `ix` and every node below it.
    pub fn subtree(&self, ix: CategoryIx) -> std::ops::Range<CategoryIx> {
        ix..self.nodes[ix as usize].subtree_end
    }

    /// `ix` and its ancestors up to the top level.
    pub(crate) fn ancestry(&self, ix: CategoryIx) -> impl Iterator<Item = CategoryIx> + '_ {
        std::iter::successors(Some(ix), |&i| self.nodes[i as usize].parent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: Option<u32>, slug: &str, children: Vec<CategoryInput>) -> CategoryInput {
        CategoryInput { id, name: slug.to_uppercase(), slug: slug.into(), children }
    }

    #[test]
    fn ids_are_assigned_depth_first_skipping_given_ones() {
        let tree = CategoryTree::build(&[
            node(None, "a", vec![node(Some(2), "a1", vec![node(None, "a1x", vec![])]), node(None, "a2", vec![])]),
            node(None, "b", vec![]),
        ]);
        let ids: Vec<(&str, u32)> = tree.nodes.iter().map(|n| (n.slug.as_str(), n.id)).collect();
        assert_eq!(ids, [("a", 1), ("a1", 2), ("a1x", 3), ("a2", 4), ("b", 5)]);
        let tree = CategoryTree::build(&[node(None, "a", vec![]), node(Some(1), "b", vec![])]);
        assert_eq!(tree.nodes[0].id, 2);
    }

    #[test]
    fn subtree_and_ancestry() {
        let tree = CategoryTree::build(&[
            node(None, "a", vec![node(None, "a1", vec![node(None, "a1x", vec![])]), node(None, "a2", vec![])]),
            node(None, "b", vec![]),
        ]);
        let a = tree.by_slug("a").unwrap();
        let slugs: Vec<&str> = tree.subtree(a).map(|i| tree.nodes[i as usize].slug.as_str()).collect();
        assert_eq!(slugs, ["a", "a1", "a1x", "a2"]);
        let leaf = tree.by_slug("a1x").unwrap();
        let up: Vec<&str> = tree.ancestry(leaf).map(|i| tree.nodes[i as usize].slug.as_str()).collect();
        assert_eq!(up, ["a1x", "a1", "a"]);
        assert_eq!(tree.roots, [0, 4]);
    }
}
