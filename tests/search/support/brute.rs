//! A plain scan over every service, written from behaviour.md's Search rules alone (no
//! index, no R-tree, no posting lists): the oracle of the differential test.

use rust_stemmers::{Algorithm, Stemmer};
use svcdir::model::Directory;
use uuid::Uuid;

/// The point and area codes of a live postcode (any spelling) or, failing that, of a
/// district (`AB10`) or sector (`AB10 1`) as behaviour.md's Search 1 defines them, by a
/// scan of every postcode: the mean of their points, the union of their codes.
pub fn place(dir: &Directory, postcode: &str) -> svcdir::model::Postcode {
    if let Some(p) = dir.postcodes.find(postcode) {
        return p.clone();
    }
    let code = postcode.trim().to_ascii_uppercase();
    let members: Vec<&svcdir::model::Postcode> = dir
        .postcodes
        .postcodes
        .iter()
        .filter(|p| p.code.split(' ').next() == Some(code.as_str()) || p.code[..p.code.len() - 2] == *code)
        .collect();
    assert!(!members.is_empty(), "{postcode} is a postcode, district or sector of the directory");
    let n = members.len() as f64;
    let mut areas: Vec<String> = members.iter().flat_map(|p| p.areas.iter().cloned()).collect();
    areas.sort();
    areas.dedup();
    svcdir::model::Postcode {
        code,
        point: svcdir::model::Point {
            lat: members.iter().map(|p| p.point.lat).sum::<f64>() / n,
            lon: members.iter().map(|p| p.point.lon).sum::<f64>() / n,
        },
        areas,
    }
}

/// One query, already valid.
#[derive(Debug, Clone)]
pub struct Query {
    /// A postcode of the directory, any spelling, or a district or sector of its postcodes.
    pub postcode: String,
    /// `q`, if any.
    pub q: Option<String>,
    /// Category slugs (any of them).
    pub categories: Vec<String>,
    /// `local` or `national`.
    pub location_type: Option<&'static str>,
    /// Metres.
    pub radius: u64,
    /// Page number, from 1.
    pub page: u64,
    /// Page size.
    pub page_size: usize,
}

/// Words as the module documentation of `svcdir::index::text` defines them.
fn words(text: &str) -> Vec<String> {
    deunicode::deunicode(text)
        .to_ascii_lowercase()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// behaviour.md, Search 4: the English stop words a query drops before matching.
const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
    "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
];

/// A word with its stem.
struct Word {
    text: String,
    stem: String,
}

fn stemmed(stemmer: &Stemmer, text: &str) -> Vec<Word> {
    words(text).into_iter().map(|w| Word { stem: stemmer.stem(&w).into_owned(), text: w }).collect()
}

fn word_matches(query: &Word, word: &Word) -> bool {
    // Search 4: the same stem, or the words within 0 edits (3 letters or fewer), 1 (4 to 6)
    // or 2 (7 or more).
    let k = match query.text.chars().count() {
        0..=3 => 0,
        4..=6 => 1,
        _ => 2,
    };
    query.stem == word.stem
        || (query.text.len().abs_diff(word.text.len()) <= k && strsim::osa_distance(&query.text, &word.text) <= k)
}

/// The searchable text of every service, split into words once.
pub struct Oracle<'d> {
    dir: &'d Directory,
    stemmer: Stemmer,
    /// Every distinct word of the directory's searchable text.
    vocabulary: Vec<Word>,
    /// Per service: name, description and category-name words, as positions in
    /// `vocabulary` (so that a query word is compared with each distinct word once, which
    /// keeps a scan of 10,000 services affordable).
    fields: Vec<[Vec<u32>; 3]>,
}

impl<'d> Oracle<'d> {
    /// Splits every service's text.
    pub fn new(dir: &'d Directory) -> Oracle<'d> {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut vocabulary: Vec<Word> = Vec::new();
        let mut known: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        let mut positions = |text: &str| -> Vec<u32> {
            stemmed(&stemmer, text)
                .into_iter()
                .map(|w| {
                    *known.entry(w.text.clone()).or_insert_with(|| {
                        vocabulary.push(w);
                        vocabulary.len() as u32 - 1
                    })
                })
                .collect()
        };
        let fields = dir
            .services
            .iter()
            .map(|s| {
                let categories: Vec<&str> =
                    s.categories.iter().map(|&c| dir.categories.nodes[c as usize].name.as_str()).collect();
                [positions(&s.name), positions(&s.description), positions(&categories.join(" "))]
            })
            .collect();
        Oracle { dir, stemmer, vocabulary, fields }
    }

    /// For each query word, which words of the vocabulary it matches.
    fn matched(&self, query_words: &[Word]) -> Vec<Vec<bool>> {
        query_words.iter().map(|q| self.vocabulary.iter().map(|w| word_matches(q, w)).collect()).collect()
    }

    /// Relevance of service `ix` for the query words (`matched` as [`Oracle::matched`]
    /// gives it), or `None` when a word matches nowhere.
    fn relevance(&self, ix: usize, matched: &[Vec<bool>]) -> Option<f64> {
        let mut total = 0.0;
        for q in matched {
            let hit = |field: &[u32]| field.iter().any(|&w| q[w as usize]);
            let [name, description, categories] = &self.fields[ix];
            let (in_name, in_description, in_category) = (hit(name), hit(description), hit(categories));
            if !(in_name || in_description || in_category) {
                return None;
            }
            total += if in_name { 2.0 } else { 0.0 }
                + if in_description { 1.5 } else { 0.0 }
                + if in_category { 1.0 } else { 0.0 };
        }
        Some(total)
    }

    /// Count and the ids of the requested page, or `None` for an invalid page.
    pub fn search(&self, query: &Query) -> Option<(usize, Vec<Uuid>)> {
        search(self, query)
    }
}

fn search(oracle: &Oracle<'_>, query: &Query) -> Option<(usize, Vec<Uuid>)> {
    let dir = oracle.dir;
    let postcode = place(dir, &query.postcode);
    let mut query_words: Vec<Word> = Vec::new();
    for w in query.q.as_deref().map(|q| stemmed(&oracle.stemmer, q)).unwrap_or_default() {
        if !STOP_WORDS.contains(&w.text.as_str()) && !query_words.iter().any(|seen| seen.text == w.text) {
            query_words.push(w);
        }
    }
    let matched = oracle.matched(&query_words);
    let mut hits: Vec<(Option<f64>, f64, &str, Uuid)> = Vec::new();
    for (ix, service) in dir.services.iter().enumerate() {
        let area_codes: Vec<&str> =
            service.service_areas.iter().map(|&a| dir.service_areas[a as usize].code.as_str()).collect();
        let in_area = area_codes.iter().any(|code| postcode.areas.iter().any(|p| p == code));
        let distances: Vec<f64> =
            service.locations.iter().map(|&l| dir.locations[l].point.distance_m(postcode.point)).collect();
        let near = distances.iter().any(|&d| d <= query.radius as f64);
        // Search 3, word for word (hence the redundant `|| in_area`).
        #[allow(clippy::nonminimal_bool)]
        if !(in_area || (near && (area_codes.is_empty() || in_area))) {
            continue;
        }
        // Search 5: the slug itself or any slug above the service's category.
        if !query.categories.is_empty() {
            let tagged = service.categories.iter().any(|&c| {
                let mut node = Some(c);
                while let Some(n) = node {
                    let category = &dir.categories.nodes[n as usize];
                    if query.categories.contains(&category.slug) {
                        return true;
                    }
                    node = category.parent;
                }
                false
            });
            if !tagged {
                continue;
            }
        }
        // Search 6.
        let national = service.service_areas.iter().any(|&a| {
            matches!(
                dir.service_areas[a as usize].kind,
                svcdir::model::AreaKind::Country | svcdir::model::AreaKind::Region
            )
        });
        match query.location_type {
            Some("local") if national => continue,
            Some("national") if !national => continue,
            _ => {}
        }
        let relevance = if query_words.is_empty() {
            0.0
        } else {
            match oracle.relevance(ix, &matched) {
                Some(r) => r,
                None => continue,
            }
        };
        let nearest = distances.iter().copied().reduce(f64::min);
        hits.push((nearest, relevance, service.name.as_str(), service.id));
    }
    // Search 7.
    hits.sort_by(|a, b| {
        let distance = match (a.0, b.0) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        distance.then(b.1.total_cmp(&a.1)).then(a.2.cmp(b.2)).then(a.3.cmp(&b.3))
    });
    // Search 8 and Errors.
    let count = hits.len();
    let start = (query.page as usize - 1) * query.page_size;
    if query.page > 1 && start >= count {
        return None;
    }
    Some((count, hits.iter().skip(start).take(query.page_size).map(|h| h.3).collect()))
}
