//! Random directories and random queries for the differential test, from a seeded RNG.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use svcdir::model::{
    Contact, Directory, Location, LocationIx, OrgIx, Point, Postcode, PostcodeDirectory, Service, ServiceIx, Timestamp,
};
use uuid::Uuid;

use super::brute::Query;
use super::{AREAS, categories, directory_of};

/// Words services are made of: stems that share (walks, walking), near-misses one and two
/// edits apart, short words, and a few repeated names so that ties happen.
pub const VOCABULARY: [&str; 40] = [
    "walk",
    "walks",
    "walking",
    "walked",
    "talk",
    "talking",
    "counselling",
    "counsellor",
    "counsel",
    "emergency",
    "food",
    "foodbank",
    "parcels",
    "cafe",
    "tea",
    "teas",
    "community",
    "support",
    "group",
    "groups",
    "advice",
    "money",
    "debt",
    "phone",
    "phones",
    "line",
    "helpline",
    "club",
    "clubs",
    "park",
    "parks",
    "gentle",
    "exercise",
    "therapy",
    "health",
    "healthy",
    "women's",
    "mens",
    "art",
    "arts",
];

const CENTRES: [(Point, &[&str]); 4] = [
    (Point { lat: 55.8609, lon: -4.2514 }, &["S12000046", "S08000021", "S37000015", "XS", "XB"]),
    (Point { lat: 55.9533, lon: -3.1883 }, &["S12000036", "XS", "XB"]),
    (Point { lat: 55.7892, lon: -3.9910 }, &["S12000044", "S08000023", "XS", "XB"]),
    (Point { lat: 56.4, lon: -5.0 }, &["XS", "XB"]),
];

fn near(rng: &mut ChaCha8Rng, centre: Point, spread: f64) -> Point {
    Point { lat: centre.lat + rng.gen_range(-spread..spread), lon: centre.lon + rng.gen_range(-spread..spread) * 1.8 }
}

fn sentence(rng: &mut ChaCha8Rng, words: std::ops::Range<usize>) -> String {
    let n = rng.gen_range(words);
    (0..n).map(|_| *VOCABULARY.choose(rng).expect("words")).collect::<Vec<_>>().join(" ")
}

/// A directory of `services` services around four places: areas of every kind, categories
/// at every level, services with neither areas nor locations, shared locations and repeated
/// names (ties on distance, relevance and name).
pub fn directory(seed: u64, services: usize) -> Directory {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut dir = directory_of(&[]);
    dir.categories = categories();
    let mut postcodes: Vec<Postcode> = Vec::new();
    for (c, (centre, areas)) in CENTRES.iter().enumerate() {
        for n in 0..8 {
            postcodes.push(Postcode {
                code: format!("P{c}{n} {n}AB"),
                point: near(&mut rng, *centre, 0.05),
                areas: areas.iter().map(|a| a.to_string()).collect(),
            });
        }
    }
    postcodes.sort_by(|a, b| a.code.cmp(&b.code));
    dir.postcodes = PostcodeDirectory { postcodes };
    let location_count = 150;
    let mut points: Vec<Point> = Vec::with_capacity(location_count);
    for i in 0..location_count {
        // Every tenth location repeats the one before's point: equal distances.
        let point = match points.last() {
            Some(&previous) if i % 10 == 9 => previous,
            _ => {
                let centre = CENTRES[rng.gen_range(0..CENTRES.len())].0;
                near(&mut rng, centre, 0.12)
            }
        };
        points.push(point);
    }
    dir.locations = points
        .into_iter()
        .enumerate()
        .map(|(i, point)| Location {
            id: Uuid::from_u128(0x9a00_0000_0000_4000_8000_0000_0000_0000 + i as u128 + 1),
            organisation: OrgIx::new(0),
            name: String::new(),
            description: String::new(),
            street_address: format!("{i} Road"),
            locality: "Town".into(),
            region: String::new(),
            state: String::new(),
            postal_code: "X1 1XX".into(),
            country: "GB".into(),
            point,
        })
        .collect();
    dir.organisations[0].locations = LocationIx::all(location_count).collect();
    dir.organisations[0].services.clear();
    dir.organisations[1].services.clear();
    let names = ["Community Cafe", "Walking Group", "Money Advice", "Support Line", "Park Club"];
    dir.services = (0..services)
        .map(|i| {
            let organisation = OrgIx::new(i % 2);
            dir.organisations[organisation].services.push(ServiceIx::new(i));
            let name = if rng.gen_bool(0.3) {
                names.choose(&mut rng).expect("names").to_string()
            } else {
                sentence(&mut rng, 1..4)
            };
            let categories = (0..rng.gen_range(0..4))
                .map(|_| rng.gen_range(0..dir.categories.nodes.len()) as u16)
                .collect::<Vec<_>>();
            let service_areas = if rng.gen_bool(0.45) {
                vec![]
            } else {
                (0..rng.gen_range(1..3)).map(|_| rng.gen_range(0..AREAS.len()) as u16).collect()
            };
            let locations = if rng.gen_bool(0.2) {
                vec![]
            } else {
                (0..rng.gen_range(1..4)).map(|_| LocationIx::new(rng.gen_range(0..location_count))).collect()
            };
            Service {
                id: Uuid::from_u128(0x5e00_0000_0000_4000_8000_0000_0000_0000 + i as u128 + 1),
                organisation,
                slug: format!("service-{i}"),
                name,
                description: sentence(&mut rng, 0..12),
                contact: Contact::default(),
                categories,
                service_areas,
                locations,
                last_updated: Timestamp(1_700_000_000_000_000),
            }
        })
        .collect();
    dir
}

/// Applies `edits` random edits (insert, delete, substitute, swap) to a word.
pub fn typo(rng: &mut ChaCha8Rng, word: &str, edits: usize) -> String {
    let mut chars: Vec<char> = word.chars().collect();
    for _ in 0..edits {
        let letter = rng.gen_range(b'a'..=b'z') as char;
        match rng.gen_range(0..4) {
            0 => {
                let at = rng.gen_range(0..=chars.len());
                chars.insert(at, letter);
            }
            1 if chars.len() > 1 => {
                let at = rng.gen_range(0..chars.len());
                chars.remove(at);
            }
            2 if chars.len() > 1 => {
                let at = rng.gen_range(0..chars.len() - 1);
                chars.swap(at, at + 1);
            }
            _ if !chars.is_empty() => {
                let at = rng.gen_range(0..chars.len());
                chars[at] = letter;
            }
            _ => chars.push(letter),
        }
    }
    chars.into_iter().collect()
}

/// Words to search for in `dir`: the words of some services' names and descriptions, and
/// of category names.
pub fn words_of(dir: &Directory) -> Vec<String> {
    let mut words: Vec<String> = dir
        .services
        .iter()
        .take(300)
        .flat_map(|s| format!("{} {}", s.name, s.description).split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .chain(dir.categories.nodes.iter().map(|n| n.name.clone()))
        .collect();
    words.sort();
    words.dedup();
    words
}

/// A random valid query and the URL asking it (v4 or v3).
pub fn query(rng: &mut ChaCha8Rng, dir: &Directory, words: &[String]) -> (Query, String) {
    let postcode = &dir.postcodes.postcodes[rng.gen_range(0..dir.postcodes.postcodes.len())].code;
    let spelling = match rng.gen_range(0..5) {
        0 => postcode.clone(),
        1 => postcode.to_lowercase().replace(' ', ""),
        2 => postcode.to_lowercase(),
        // The postcode's district, or its sector (behaviour.md, Search 1).
        3 => postcode.split(' ').next().expect("a district").to_owned(),
        _ => postcode[..postcode.len() - 2].to_lowercase(),
    };
    let v3 = rng.gen_bool(0.15);
    let mut url = form_urlencoded::Serializer::new(String::new());
    url.append_pair("postcode", &spelling);
    let radius = *[0u64, 50, 300, 1000, 2500, 5000, 5000, 5000, 12_000, 40_000, 150_000].choose(rng).expect("radii");
    if radius != 5000 || rng.gen_bool(0.2) {
        url.append_pair("radius", &radius.to_string());
    }
    let q = rng.gen_bool(0.45).then(|| {
        let mut q: Vec<String> = (0..rng.gen_range(1..3))
            .map(|_| {
                let word = words.choose(rng).expect("words");
                let edits = *[0, 0, 0, 1, 1, 2, 3].choose(rng).expect("edits");
                typo(rng, word, edits)
            })
            .collect();
        // Stop words, which the search drops (Search 4), sometimes alone.
        if rng.gen_bool(0.15) {
            q.insert(
                rng.gen_range(0..=q.len()),
                (*["for", "the", "and", "of", "The"].choose(rng).expect("stop")).into(),
            );
        }
        if rng.gen_bool(0.03) {
            q = vec!["to".into(), "the".into()];
        }
        q.join(" ")
    });
    if let Some(q) = &q {
        url.append_pair("q", q);
    }
    let categories: Vec<String> = if rng.gen_bool(0.3) {
        (0..rng.gen_range(1..4))
            .map(|_| dir.categories.nodes[rng.gen_range(0..dir.categories.nodes.len())].slug.clone())
            .collect()
    } else {
        vec![]
    };
    if !categories.is_empty() {
        url.append_pair("category", &categories.join(","));
    }
    let location_type = *[None, None, None, Some("local"), Some("national")].choose(rng).expect("types");
    if let Some(t) = location_type {
        url.append_pair("location_type", t);
    }
    let page_size = if v3 {
        10
    } else {
        let size = *[0usize, 1, 3, 10, 25, 100, 150].choose(rng).expect("sizes");
        if size == 0 {
            10
        } else {
            url.append_pair("page_size", &size.to_string());
            size.min(100)
        }
    };
    let page = *[1u64, 1, 1, 1, 1, 2, 3, 40].choose(rng).expect("pages");
    if page != 1 || rng.gen_bool(0.2) {
        url.append_pair("page", &page.to_string());
    }
    let path = if v3 { "/api/v3/search/" } else { "/api/v4/services/" };
    let query = Query { postcode: spelling, q, categories, location_type, radius, page, page_size };
    (query, format!("{path}?{}", url.finish()))
}
