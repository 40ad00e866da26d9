//! `svcdir sample`: deterministic synthetic datasets in the input format (input-format.md).
//!
//! The same `(services, seed)` always gives byte-identical files: every random draw comes
//! from a [`ChaCha8Rng`] seeded with the seed (the clock is never read), postcodes from one
//! stream of it and each organisation, with its locations and services, from a stream of
//! its own. Records are serialised from the loader's own structs
//! ([`crate::input::records`]), so the generator and the loader agree by construction, and
//! written as they are made, so a million services take bounded memory.
//!
//! What the data looks like, and why:
//! - Places are real Scottish towns (`towns`) with the area codes current postcode files
//!   carry, including the post-2018 codes that only the alias table maps onto the fixed
//!   list of service areas; services name only codes of that list.
//! - Services mix coverage the way the directory does: mostly local (locations only),
//!   some local plus their council area, some area-only, a few national, a few with neither.
//! - Contact details are fictional (`example.org`, Ofcom drama numbers); see `text`.

mod postcodes;
mod text;
mod towns;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use uuid::Uuid;

use crate::input::records::{
    CategoryRecord, Extensions, LocationRecord, OrganisationRecord, ServiceAreaRecord, ServiceRecord,
};
use postcodes::Postcodes;
use towns::{TOWNS, Town, list_code};

/// The category tree written to `categories.json`, verbatim.
pub const CATEGORIES_JSON: &str = include_str!("categories.json");
/// The service areas written to `service_areas.json`, verbatim.
pub const SERVICE_AREAS_JSON: &str = include_str!("service_areas.json");

/// File names inside the output directory.
const ORGANISATIONS_FILE: &str = "organisations.jsonl";
const LOCATIONS_FILE: &str = "locations.jsonl";
const SERVICES_FILE: &str = "services.jsonl";
const POSTCODES_FILE: &str = "postcodes/sample-smalluser.csv";

/// Most services one organisation runs (also bounds the given-slug key, see [`given_slug`]).
const MAX_SERVICES_PER_ORGANISATION: usize = 20;
// Service slug keys are `organisation index * 32 + position`, so positions must stay below 32.
const _: () = assert!(MAX_SERVICES_PER_ORGANISATION < 32);
/// First ChaCha stream used for organisations; the ones below are reserved.
const FIRST_ORGANISATION_STREAM: u64 = 16;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SampleConfig {
    /// Number of services to generate (published and unpublished together).
    pub services: usize,
    /// Seed of the random generator: same seed, same bytes.
    pub seed: u64,
    /// Directory to write the dataset into (created if missing).
    pub out: PathBuf,
}

/// What was written.
#[derive(Debug, Clone, Default)]
pub struct SampleSummary {
    /// Organisations written.
    pub organisations: usize,
    /// Locations written.
    pub locations: usize,
    /// Services written.
    pub services: usize,
    /// Postcode rows written.
    pub postcodes: usize,
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// Writing a file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Serialising a record into a `.jsonl` file failed.
    #[error("cannot write {path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// Writing the postcode CSV failed.
    #[error("cannot write {path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: csv::Error,
    },
    /// The embedded reference data does not fit the generator (a bug in this crate).
    #[error("embedded {file} is unusable: {message}")]
    Embedded {
        /// `categories.json` or `service_areas.json`.
        file: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Writes a complete dataset into `cfg.out`: the two embedded reference files, the three
/// `.jsonl` files and `postcodes/sample-smalluser.csv`. Existing files of those names are
/// overwritten; other files in the directory are left alone.
pub fn generate(cfg: &SampleConfig) -> Result<SampleSummary, SampleError> {
    let categories = Categories::parse()?;
    let areas = Areas::parse()?;

    let postcode_dir = cfg.out.join("postcodes");
    fs::create_dir_all(&postcode_dir).map_err(|source| SampleError::Io { path: postcode_dir.clone(), source })?;
    write_file(&cfg.out.join("categories.json"), CATEGORIES_JSON)?;
    write_file(&cfg.out.join("service_areas.json"), SERVICE_AREAS_JSON)?;

    let base = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut postcode_rng = base.clone();
    postcode_rng.set_stream(1);
    let postcodes = postcodes::generate(&mut postcode_rng, postcodes::target_count(cfg.services));
    postcodes::write_csv(&cfg.out.join(POSTCODES_FILE), &postcodes)?;

    let ctx = Context::new(&categories, &areas, &postcodes);
    let mut out = Writers {
        organisations: JsonLines::create(cfg.out.join(ORGANISATIONS_FILE))?,
        locations: JsonLines::create(cfg.out.join(LOCATIONS_FILE))?,
        services: JsonLines::create(cfg.out.join(SERVICES_FILE))?,
    };
    let mut summary = SampleSummary { postcodes: postcodes.all.len(), ..SampleSummary::default() };
    let mut remaining = cfg.services;
    let mut index: u64 = 0;
    while remaining > 0 {
        // A stream per organisation: organisation n is the same whatever follows it.
        let mut rng = base.clone();
        rng.set_stream(FIRST_ORGANISATION_STREAM + index);
        let count = services_per_organisation(&mut rng).min(remaining);
        ctx.organisation(&mut rng, index, count, &mut out, &mut summary)?;
        remaining -= count;
        index += 1;
    }
    out.organisations.finish()?;
    out.locations.finish()?;
    out.services.finish()?;
    Ok(summary)
}

fn write_file(path: &Path, contents: &str) -> Result<(), SampleError> {
    fs::write(path, contents).map_err(|source| SampleError::Io { path: path.to_path_buf(), source })
}

/// One `.jsonl` file being written, one record per line.
struct JsonLines {
    path: PathBuf,
    w: BufWriter<File>,
}

impl JsonLines {
    fn create(path: PathBuf) -> Result<Self, SampleError> {
        let file = File::create(&path).map_err(|source| SampleError::Io { path: path.clone(), source })?;
        Ok(Self { path, w: BufWriter::with_capacity(1 << 16, file) })
    }

    fn write<T: Serialize>(&mut self, record: &T) -> Result<(), SampleError> {
        serde_json::to_writer(&mut self.w, record)
            .map_err(|source| SampleError::Json { path: self.path.clone(), source })?;
        self.w.write_all(b"\n").map_err(|source| SampleError::Io { path: self.path.clone(), source })
    }

    fn finish(mut self) -> Result<(), SampleError> {
        self.w.flush().map_err(|source| SampleError::Io { path: self.path, source })
    }
}

struct Writers {
    organisations: JsonLines,
    locations: JsonLines,
    services: JsonLines,
}

/// One node of the category tree, flattened.
struct Category {
    slug: String,
    name: String,
    /// Index into `Categories::tops`.
    top: usize,
    /// The second-level node this one is under (itself at the top two levels).
    branch: usize,
}

/// The nodes of one top-level category, by level.
struct Top {
    node: usize,
    second: Vec<usize>,
    /// Third level and below.
    deeper: Vec<usize>,
}

/// The embedded category tree, flattened depth-first.
struct Categories {
    all: Vec<Category>,
    tops: Vec<Top>,
    /// For each node: itself and every node below it.
    subtree: Vec<Vec<usize>>,
    by_slug: HashMap<String, usize>,
}

impl Categories {
    fn parse() -> Result<Self, SampleError> {
        let tree: Vec<CategoryRecord> = serde_json::from_str(CATEGORIES_JSON)
            .map_err(|e| SampleError::Embedded { file: "categories.json", message: e.to_string() })?;
        let mut cats = Categories { all: Vec::new(), tops: Vec::new(), subtree: Vec::new(), by_slug: HashMap::new() };
        for (t, root) in tree.iter().enumerate() {
            cats.tops.push(Top { node: cats.all.len(), second: Vec::new(), deeper: Vec::new() });
            cats.add(root, t, 0, None);
        }
        if cats.tops.is_empty() {
            return Err(SampleError::Embedded { file: "categories.json", message: "no categories".to_owned() });
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
    fn choose(&self, rng: &mut ChaCha8Rng, theme: Option<usize>) -> Vec<usize> {
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
struct Areas {
    /// For each town: council, health board, integration authority (list codes).
    by_town: Vec<[String; 3]>,
    /// For each town: the list codes of the other councils in its health board.
    neighbours: Vec<Vec<String>>,
}

impl Areas {
    fn parse() -> Result<Self, SampleError> {
        let list: Vec<ServiceAreaRecord> = serde_json::from_str(SERVICE_AREAS_JSON)
            .map_err(|e| SampleError::Embedded { file: "service_areas.json", message: e.to_string() })?;
        let known: HashSet<&str> = list.iter().map(|a| a.code.as_str()).collect();
        let mut by_town = Vec::with_capacity(TOWNS.len());
        for town in TOWNS {
            let codes = [town.council, town.health_board, town.integration_authority].map(|c| list_code(c).to_owned());
            if let Some(missing) = codes.iter().find(|c| !known.contains(c.as_str())) {
                return Err(SampleError::Embedded {
                    file: "service_areas.json",
                    message: format!("no area {missing} (for {})", town.name),
                });
            }
            by_town.push(codes);
        }
        for national in ["XS", "XB"] {
            if !known.contains(national) {
                return Err(SampleError::Embedded {
                    file: "service_areas.json",
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

/// How a service says where it is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coverage {
    /// Locations only: found by distance.
    Local,
    /// Locations plus the council area of the town they are in.
    LocalAndCouncil,
    /// Service areas of its town only, no locations.
    Areas,
    /// `XS` and/or `XB`, with or without a location.
    National { located: bool },
    /// Neither locations nor service areas.
    Nowhere,
    /// Locations in two or three towns of the organisation.
    SeveralTowns,
}

impl Coverage {
    fn draw(rng: &mut ChaCha8Rng) -> Self {
        match rng.gen_range(0..100) {
            0..=54 => Coverage::Local,
            55..=69 => Coverage::LocalAndCouncil,
            70..=84 => Coverage::Areas,
            85..=89 => Coverage::National { located: rng.gen_bool(0.5) },
            90..=94 => Coverage::Nowhere,
            _ => Coverage::SeveralTowns,
        }
    }

    fn needs_location(self) -> bool {
        matches!(
            self,
            Coverage::Local | Coverage::LocalAndCouncil | Coverage::SeveralTowns | Coverage::National { located: true }
        )
    }
}

/// How many services an organisation runs: mostly one to three, a long tail up to
/// [`MAX_SERVICES_PER_ORGANISATION`]; about three on average.
fn services_per_organisation(rng: &mut ChaCha8Rng) -> usize {
    match rng.gen_range(0..100) {
        0..=34 => 1,
        35..=59 => 2,
        60..=74 => 3,
        75..=83 => 4,
        84..=89 => 5,
        90..=97 => rng.gen_range(6..=10),
        _ => rng.gen_range(11..=MAX_SERVICES_PER_ORGANISATION),
    }
}

/// A location already written, as its services see it.
struct Placed {
    id: Uuid,
    town: usize,
}

/// Everything an organisation is generated from.
struct Context<'a> {
    categories: &'a Categories,
    areas: &'a Areas,
    postcodes: &'a Postcodes,
    /// Where organisations are based.
    town_choice: TownChoice,
    /// Towns of each town's health board (itself included).
    board_towns: Vec<Vec<usize>>,
}

impl<'a> Context<'a> {
    fn new(categories: &'a Categories, areas: &'a Areas, postcodes: &'a Postcodes) -> Self {
        let town_choice = TownChoice::new();
        let board_towns = TOWNS
            .iter()
            .map(|t| (0..TOWNS.len()).filter(|&o| TOWNS[o].health_board == t.health_board).collect())
            .collect();
        Context { categories, areas, postcodes, town_choice, board_towns }
    }

    /// Writes organisation number `index`, its locations and its `count` services.
    fn organisation(
        &self,
        rng: &mut ChaCha8Rng,
        index: u64,
        count: usize,
        out: &mut Writers,
        summary: &mut SampleSummary,
    ) -> Result<(), SampleError> {
        let home = self.town_choice.sample(rng);
        let home_town = &TOWNS[home];
        let (name, theme) = text::organisation_name(rng, home_town);
        let theme = self.categories.by_slug.get(theme).copied();
        let coverages: Vec<Coverage> = (0..count).map(|_| Coverage::draw(rng)).collect();
        let needs_location = coverages.iter().any(|c| c.needs_location());
        let several_towns = coverages.contains(&Coverage::SeveralTowns);

        let id = random_uuid(rng);
        let record = self.organisation_record(rng, id, index, &name, home_town, theme);
        let domain = record.url.strip_prefix("https://www.").map(str::to_owned);
        let org_phone = record.phone.clone();
        out.organisations.write(&record)?;
        summary.organisations += 1;

        // Towns the organisation works in: its home, sometimes a neighbour or two.
        let mut towns = vec![home];
        if needs_location {
            let extra = if several_towns {
                rng.gen_range(1..=2)
            } else {
                match rng.gen_range(0..100) {
                    0..=79 => 0,
                    80..=94 => 1,
                    _ => 2,
                }
            };
            for _ in 0..extra {
                let board = &self.board_towns[home];
                // Mostly a neighbour in the same health board; now and then anywhere.
                let town = if board.len() > 1 && rng.gen_bool(0.9) {
                    board[rng.gen_range(0..board.len())]
                } else {
                    self.town_choice.sample(rng)
                };
                if !towns.contains(&town) {
                    towns.push(town);
                }
            }
            // A several-towns service needs a second town even if the draws repeated: a
            // neighbour when the health board has one, else any other town.
            if several_towns && towns.len() < 2 {
                let neighbours: Vec<usize> = self.board_towns[home].iter().copied().filter(|&t| t != home).collect();
                let town = match neighbours.choose(rng) {
                    Some(&t) => t,
                    None => (home + 1 + rng.gen_range(0..TOWNS.len() - 1)) % TOWNS.len(),
                };
                towns.push(town);
            }
        }

        let mut placed = Vec::new();
        if needs_location {
            let extra = match rng.gen_range(0..100) {
                0..=54 => 0,
                55..=79 => 1,
                80..=89 => 2,
                _ => rng.gen_range(3..=6),
            } + count / 6;
            let n = towns.len().max(1 + extra);
            for i in 0..n {
                // Every town of the organisation gets a location; the rest mostly at home.
                let town = if i < towns.len() {
                    towns[i]
                } else if rng.gen_bool(0.6) {
                    home
                } else {
                    towns[rng.gen_range(0..towns.len())]
                };
                let location = self.location_record(rng, id, town);
                placed.push(Placed { id: location.id, town });
                out.locations.write(&location)?;
                summary.locations += 1;
            }
        }

        for (position, coverage) in coverages.into_iter().enumerate() {
            let service = self.service_record(
                rng,
                ServiceOwner {
                    id,
                    index,
                    name: &name,
                    theme,
                    home,
                    domain: domain.as_deref(),
                    phone: &org_phone,
                    locations: &placed,
                },
                position,
                coverage,
            );
            out.services.write(&service)?;
            summary.services += 1;
        }
        Ok(())
    }

    fn organisation_record(
        &self,
        rng: &mut ChaCha8Rng,
        id: Uuid,
        index: u64,
        name: &str,
        town: &Town,
        theme: Option<usize>,
    ) -> OrganisationRecord {
        let domain = format!("{}.example.org", text::fold(name, ""));
        let handle = text::handle(name);
        let description = if rng.gen_bool(0.7) {
            let theme = theme.unwrap_or_else(|| rng.gen_range(0..self.categories.all.len()));
            let category = &self.categories.all[theme];
            let condition =
                Some(self.categories.tops[category.top].node) == self.categories.by_slug.get("conditions").copied();
            text::organisation_description(rng, name, town, &category.name, condition)
        } else {
            String::new()
        };
        let url = maybe(rng, 0.75, || format!("https://www.{domain}"));
        let phone = if rng.gen_bool(0.7) { text::phone(rng, town) } else { String::new() };
        let email = if rng.gen_bool(0.6) {
            let local = text::pick(rng, &["info", "hello", "enquiries", "admin", "contact"]);
            format!("{local}@{domain}")
        } else {
            String::new()
        };
        let facebook = maybe(rng, 0.35, || format!("https://www.facebook.com/{handle}"));
        let twitter = match rng.gen_range(0..100) {
            0..=17 => format!("@{handle}"),
            18..=24 => format!("https://twitter.com/{handle}"),
            _ => String::new(),
        };
        OrganisationRecord {
            id,
            name: name.to_owned(),
            slug: rng.gen_bool(0.006).then(|| given_slug(name, index)),
            description,
            url,
            phone,
            email,
            facebook,
            twitter,
            is_claimed: rng.gen_bool(0.4),
            published: !rng.gen_bool(0.015),
            last_edited: timestamp(rng),
            extra: extension(rng, 0.02),
        }
    }

    fn location_record(&self, rng: &mut ChaCha8Rng, organisation: Uuid, town: usize) -> LocationRecord {
        let t = &TOWNS[town];
        let live = &self.postcodes.live_by_town[town];
        let postcode = &self.postcodes.all[live[rng.gen_range(0..live.len())]];
        // Within about 250 m of the postcode's point: the same street or the next one.
        let (lat, lon) = postcodes::offset(rng, postcode.lat, postcode.lon, 0.25);
        LocationRecord {
            id: random_uuid(rng),
            organisation_id: organisation,
            name: text::location_name(rng, t),
            description: text::location_description(rng),
            street_address: text::street_address(rng),
            locality: t.name.to_owned(),
            region: maybe(rng, 0.5, || t.area.to_owned()),
            state: maybe(rng, 0.25, || "Scotland".to_owned()),
            postal_code: postcode.code.clone(),
            country: "GB".to_owned(),
            latitude: round6(lat),
            longitude: round6(lon),
            extra: extension(rng, 0.01),
        }
    }

    fn service_record(
        &self,
        rng: &mut ChaCha8Rng,
        owner: ServiceOwner<'_>,
        position: usize,
        coverage: Coverage,
    ) -> ServiceRecord {
        let (location_ids, service_areas, town) = self.coverage(rng, &owner, coverage);
        let t = &TOWNS[town];
        let categories = self.categories.choose(rng, owner.theme);
        let primary = &self.categories.all[categories[0]];
        let top = &self.categories.all[self.categories.tops[primary.top].node];
        let is_top = categories[0] == self.categories.tops[primary.top].node;
        let name = text::service_name(rng, &top.slug, &primary.name, is_top, t);
        let description = if rng.gen_bool(0.97) {
            text::service_description(rng, &name, owner.name, &top.slug, &primary.name, t)
        } else {
            String::new()
        };
        let url = if rng.gen_bool(0.8) {
            match owner.domain {
                Some(domain) => format!("https://www.{domain}/{}", text::fold(&name, "-")),
                None => format!("https://{}.example.org", text::fold(&name, "")),
            }
        } else {
            String::new()
        };
        let phone = if name.contains("Line") || name.contains("Helpline") || rng.gen_bool(0.08) {
            text::helpline(rng)
        } else if rng.gen_bool(0.75) {
            if !owner.phone.is_empty() && rng.gen_bool(0.5) { owner.phone.to_owned() } else { text::phone(rng, t) }
        } else {
            String::new()
        };
        let email = if rng.gen_bool(0.65) {
            let local = text::fold(name.split(' ').next().unwrap_or("info"), "");
            let local = if local.is_empty() { "info".to_owned() } else { local };
            match owner.domain {
                Some(domain) => format!("{local}@{domain}"),
                None => format!("{}@example.org", text::fold(&name, ".")),
            }
        } else {
            String::new()
        };
        // Unique: position < MAX_SERVICES_PER_ORGANISATION < 32.
        let slug_key = owner.index * 32 + position as u64;
        ServiceRecord {
            id: random_uuid(rng),
            organisation_id: owner.id,
            slug: rng.gen_bool(0.006).then(|| given_slug(&name, slug_key)),
            name,
            description,
            url,
            phone,
            email,
            categories: categories.iter().map(|&c| self.categories.all[c].slug.clone()).collect(),
            service_areas,
            location_ids,
            published: !rng.gen_bool(0.02),
            last_updated: timestamp(rng),
            extra: extension(rng, 0.03),
        }
    }

    /// Locations, service areas and the town the service is about.
    fn coverage(
        &self,
        rng: &mut ChaCha8Rng,
        owner: &ServiceOwner<'_>,
        coverage: Coverage,
    ) -> (Vec<Uuid>, Vec<String>, usize) {
        let locations = owner.locations;
        // One location, plus sometimes others in the same town.
        let local = |rng: &mut ChaCha8Rng| -> (Vec<Uuid>, usize) {
            let anchor = &locations[rng.gen_range(0..locations.len())];
            let mut ids = vec![anchor.id];
            let more = match rng.gen_range(0..100) {
                0..=74 => 0,
                75..=94 => 1,
                _ => 2,
            };
            let same_town: Vec<&Placed> =
                locations.iter().filter(|l| l.town == anchor.town && l.id != anchor.id).collect();
            ids.extend(same_town.choose_multiple(rng, more).map(|l| l.id));
            (ids, anchor.town)
        };
        match coverage {
            Coverage::Local => {
                let (ids, town) = local(rng);
                (ids, Vec::new(), town)
            }
            Coverage::LocalAndCouncil => {
                let (ids, town) = local(rng);
                (ids, vec![self.areas.by_town[town][0].clone()], town)
            }
            Coverage::SeveralTowns => {
                let mut towns: Vec<usize> = Vec::new();
                for l in locations {
                    if !towns.contains(&l.town) {
                        towns.push(l.town);
                    }
                }
                let n = rng.gen_range(2..=3).min(towns.len());
                let chosen: Vec<usize> = towns.choose_multiple(rng, n).copied().collect();
                let ids = chosen
                    .iter()
                    .filter_map(|t| {
                        let here: Vec<&Placed> = locations.iter().filter(|l| l.town == *t).collect();
                        here.choose(rng).map(|l| l.id)
                    })
                    .collect();
                (ids, Vec::new(), chosen.first().copied().unwrap_or(owner.home))
            }
            Coverage::Areas => (Vec::new(), self.area_codes(rng, owner.home), owner.home),
            Coverage::National { located } => {
                let areas = match rng.gen_range(0..100) {
                    0..=59 => vec!["XS".to_owned()],
                    60..=74 => vec!["XB".to_owned()],
                    _ => vec!["XB".to_owned(), "XS".to_owned()],
                };
                if located {
                    let (ids, town) = local(rng);
                    (ids, areas, town)
                } else {
                    (Vec::new(), areas, owner.home)
                }
            }
            Coverage::Nowhere => (Vec::new(), Vec::new(), owner.home),
        }
    }

    /// Area codes of a town: its council, health board or partnership, or several.
    fn area_codes(&self, rng: &mut ChaCha8Rng, town: usize) -> Vec<String> {
        let [council, board, partnership] = &self.areas.by_town[town];
        match rng.gen_range(0..100) {
            0..=44 => vec![council.clone()],
            45..=59 => vec![board.clone()],
            60..=71 => vec![partnership.clone()],
            72..=84 => vec![council.clone(), partnership.clone()],
            85..=92 => vec![council.clone(), board.clone()],
            _ => {
                // A council and its neighbours in the same health board.
                let mut codes = vec![council.clone()];
                let others = &self.areas.neighbours[town];
                let n = rng.gen_range(1..=2).min(others.len());
                codes.extend(others.choose_multiple(rng, n).cloned());
                codes
            }
        }
    }
}

/// What a service needs to know about its organisation.
struct ServiceOwner<'a> {
    id: Uuid,
    index: u64,
    name: &'a str,
    /// The category node the organisation's work centres on.
    theme: Option<usize>,
    home: usize,
    /// Web domain, when the organisation has a web site.
    domain: Option<&'a str>,
    phone: &'a str,
    locations: &'a [Placed],
}

/// A version-4 UUID from the seeded generator (never from the clock or the OS).
fn random_uuid(rng: &mut ChaCha8Rng) -> Uuid {
    let mut bytes = [0u8; 16];
    rng.fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// An RFC 3339 timestamp in 2019–2025 with microseconds: mostly `Z`, some `+00:00`, and
/// summer edits sometimes in British Summer Time (`+01:00`), as exports from different
/// systems write them.
fn timestamp(rng: &mut ChaCha8Rng) -> String {
    const START: i64 = 1_546_300_800; // 2019-01-01T00:00:00Z
    const END: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z
    let secs = rng.gen_range(START..END);
    let micros: u32 = rng.gen_range(0..1_000_000);
    let Some(utc) = DateTime::<Utc>::from_timestamp(secs, micros * 1000) else {
        // Unreachable for the range above; a fixed valid value keeps the type total.
        return "2019-01-01T00:00:00.000000Z".to_owned();
    };
    // Of 20: one in BST (summer only, so ~2.5 % overall), four `+00:00`, the rest `Z`.
    let style = rng.gen_range(0..20);
    let summer = (4..=9).contains(&chrono::Datelike::month(&utc));
    match (style, summer, FixedOffset::east_opt(3600)) {
        (0, true, Some(bst)) => utc.with_timezone(&bst).to_rfc3339_opts(SecondsFormat::Micros, false),
        (0..=4, _, _) => utc.to_rfc3339_opts(SecondsFormat::Micros, false),
        _ => utc.to_rfc3339_opts(SecondsFormat::Micros, true),
    }
}

/// Occasionally an `x_source` extension field, which the loader keeps out of every output.
fn extension(rng: &mut ChaCha8Rng, probability: f64) -> Extensions {
    let mut extra = Extensions::new();
    if rng.gen_bool(probability) {
        let value = match rng.gen_range(0..3) {
            0 => serde_json::json!("aliss-import-2019"),
            1 => serde_json::json!("manual-entry"),
            _ => serde_json::json!({"system": "tsi-feed", "ref": rng.gen_range(1000..99_999)}),
        };
        extra.insert("x_source".to_owned(), value);
    }
    extra
}

/// A valid given slug: the folded name cut to fit, a hyphen and `key` in letters.
///
/// Letters, not digits, at the end: slugs the loader generates end in a number, so a given
/// slug can never take one of theirs, and distinct keys give distinct slugs.
fn given_slug(name: &str, key: u64) -> String {
    let mut base = text::fold(name, "-");
    base.truncate(100);
    let base = base.trim_end_matches('-');
    let base = if base.is_empty() { "item" } else { base };
    format!("{base}-{}", letters(key))
}

/// `key` in bijective base 26 over `a`..`z`: 0 → `a`, 25 → `z`, 26 → `aa`.
fn letters(mut key: u64) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (key % 26) as u8);
        if key < 26 {
            break;
        }
        key = key / 26 - 1;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

fn maybe(rng: &mut ChaCha8Rng, probability: f64, value: impl FnOnce() -> String) -> String {
    if rng.gen_bool(probability) { value() } else { String::new() }
}

/// Six decimals: about 10 cm, what editors' map pickers store.
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Draws a town by size, flattened a little (weight + 2) so that small towns get some
/// organisations too.
struct TownChoice {
    /// Running totals of the weights, one per town.
    cumulative: Vec<u32>,
}

impl TownChoice {
    fn new() -> Self {
        let cumulative = TOWNS
            .iter()
            .scan(0, |total, t| {
                *total += t.weight + 2;
                Some(*total)
            })
            .collect();
        TownChoice { cumulative }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(1);
        let r = rng.gen_range(0..total);
        self.cumulative.partition_point(|&c| c <= r)
    }
}
