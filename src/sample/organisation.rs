//! One organisation of the sample, with its locations and services: how each service
//! covers places (by distance, by area, nationally), its categories, contacts and texts,
//! drawn from the organisation's own random stream.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use super::draw::{TownChoice, extension, given_slug, maybe, random_uuid, round6, timestamp};
use super::postcodes::{self, Postcodes};
use super::reference::{Areas, Categories};
use super::towns::{Town, towns};
use super::{MAX_SERVICES_PER_ORGANISATION, SampleError, SampleSummary, Writers, text};
use crate::input::records::{LocationRecord, OrganisationRecord, ServiceRecord};

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
pub(super) fn services_per_organisation(rng: &mut ChaCha8Rng) -> usize {
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
pub(super) struct Context<'a> {
    categories: &'a Categories,
    areas: &'a Areas,
    postcodes: &'a Postcodes,
    /// Where organisations are based.
    town_choice: TownChoice,
    /// Towns of each town's health board (itself included).
    board_towns: Vec<Vec<usize>>,
}

impl<'a> Context<'a> {
    pub(super) fn new(categories: &'a Categories, areas: &'a Areas, postcodes: &'a Postcodes) -> Self {
        let town_choice = TownChoice::new();
        let board_towns = towns()
            .iter()
            .map(|t| (0..towns().len()).filter(|&o| towns()[o].health_board == t.health_board).collect())
            .collect();
        Context { categories, areas, postcodes, town_choice, board_towns }
    }

    /// Writes organisation number `index`, its locations and its `count` services.
    pub(super) fn organisation(
        &self,
        rng: &mut ChaCha8Rng,
        index: u64,
        count: usize,
        out: &mut Writers,
        summary: &mut SampleSummary,
    ) -> Result<(), SampleError> {
        let home = self.town_choice.sample(rng);
        let home_town = &towns()[home];
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
                    None => {
                        (home + 1 + rng.gen_range(0..super::towns::towns().len() - 1)) % super::towns::towns().len()
                    }
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
        let t = &towns()[town];
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
        let t = &towns()[town];
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
