//! The directory every search test starts from: fifteen services around Glasgow, each there
//! for one rule (comments say which), built straight into the model, plus its index and
//! search state; and `tiny`, three services at one location, for the unit tests that
//! check exact derived structures. Unit tests and the integration targets share them.

use std::sync::Arc;

use uuid::Uuid;

use crate::index::SearchIndex;
use crate::model::category::CategoryInput;
use crate::model::{
    AreaKind, CategoryTree, Contact, Directory, Location, LocationIx, OrgIx, Organisation, Point, Postcode,
    PostcodeDirectory, Service, ServiceArea, ServiceIx, Timestamp,
};
use crate::server::AppState;
use crate::views::Publication;

/// Base URL recorded in every test index.
pub const BASE: &str = "https://directory.example.org";

/// The publication of the test indexes.
pub fn publication() -> Publication {
    Publication::with_defaults(BASE.into(), "https://www.example.org".into())
}

/// The G2 1AL point.
pub const G2: Point = Point { lat: 55.8609, lon: -4.2514 };

/// Area codes, in the order of `service_areas`.
pub const AREAS: [(&str, AreaKind, &str); 9] = [
    ("XS", AreaKind::Country, "Scotland"),
    ("XB", AreaKind::Country, "United Kingdom"),
    ("S12000046", AreaKind::LocalAuthority, "Glasgow City"),
    ("S12000044", AreaKind::LocalAuthority, "North Lanarkshire"),
    ("S08000021", AreaKind::HealthBoard, "Greater Glasgow and Clyde"),
    ("S37000015", AreaKind::IntegrationAuthority, "Glasgow City"),
    ("S12000036", AreaKind::LocalAuthority, "City of Edinburgh"),
    ("RW", AreaKind::Region, "West of Scotland"),
    ("S08000023", AreaKind::HealthBoard, "Lanarkshire"),
];

fn area(code: &str) -> u16 {
    AREAS.iter().position(|(c, ..)| *c == code).expect("known area") as u16
}

fn cat(input: (&str, &str), children: Vec<CategoryInput>) -> CategoryInput {
    CategoryInput { id: None, name: input.1.into(), slug: input.0.into(), children }
}

/// The category tree of the fixture: three levels under `activity`.
pub fn categories() -> CategoryTree {
    CategoryTree::build(&[
        cat(
            ("food-nutrition", "Food & Nutrition"),
            vec![cat(("foodbank", "Foodbank"), vec![]), cat(("community-cafe", "Community Cafe"), vec![])],
        ),
        cat(
            ("activity", "Activity"),
            vec![cat(
                ("physical-activity", "Physical Activity"),
                vec![
                    cat(("exercise-get-fit", "Exercise & Get Fit"), vec![]),
                    cat(("outdoor-pursuits", "Outdoor Pursuits"), vec![]),
                ],
            )],
        ),
        cat(("money", "Money"), vec![cat(("money-advice", "Money Advice"), vec![])]),
        cat(
            ("health-social-care-services", "Health & Social Care Services"),
            vec![cat(("therapy", "Therapy"), vec![cat(("counselling", "Counselling"), vec![])])],
        ),
    ])
}

/// Named places: (name, point).
pub(crate) const PLACES: [(&str, Point); 7] = [
    ("L0 Glasgow centre, 90 m from G2 1AL", Point { lat: 55.8609, lon: -4.2500 }),
    ("L1 Glasgow west, 3.2 km", Point { lat: 55.8700, lon: -4.3000 }),
    ("L2 Motherwell, 17 km", Point { lat: 55.7892, lon: -3.9910 }),
    ("L3 Edinburgh, 67 km", Point { lat: 55.9533, lon: -3.1883 }),
    ("L4 Glasgow east, 3.4 km", Point { lat: 55.8500, lon: -4.2000 }),
    ("L5 Glasgow, 120 m", Point { lat: 55.8620, lon: -4.2514 }),
    ("L6 Glasgow south, 4.9 km", Point { lat: 55.8169, lon: -4.2514 }),
];

/// One service of the fixture: (name, description, category slugs, area codes, places).
pub type ServiceSpec = (&'static str, &'static str, &'static [&'static str], &'static [&'static str], &'static [usize]);

/// The services of the fixture, in id order. Comments say what each one is for.
pub const SERVICES: [ServiceSpec; 15] = [
    // Area match without any location: last among the G2 results.
    ("Glasgow Foodbank", "Emergency food parcels.", &["foodbank"], &["S12000046"], &[]),
    // Radius match without areas; "walks" for stemming.
    ("Park Strollers", "Gentle walks in the park every week.", &["outdoor-pursuits"], &[], &[1]),
    // 90 m from G2 1AL, but serves only North Lanarkshire: never shown for G2 1AL.
    ("Lanarkshire Money Advice", "Debt and benefits help.", &["money-advice"], &["S12000044"], &[0]),
    // National (Country), no location.
    ("Scotland Helpline", "Phone line for anyone.", &["money"], &["XS"], &[]),
    // Area-less and far away: only near Edinburgh.
    ("Edinburgh Community Cafe", "Soup, tea and company.", &["community-cafe"], &[], &[3]),
    // Five services at L4: ties on distance.
    ("The Counselling Rooms", "Talk to a trained counsellor.", &["counselling"], &[], &[4]),
    ("Listening Ear", "Counselling and talk therapy.", &["therapy"], &[], &[4]),
    ("Apple Club", "A club for everyone.", &["exercise-get-fit"], &[], &[4]),
    ("Twin Service", "The first twin.", &[], &[], &[4]),
    ("Twin Service", "The second twin.", &[], &[], &[4]),
    // Area-less, 90 m away: first.
    ("Drop-in Centre", "Come along any day.", &["community-cafe"], &[], &[0]),
    // Glasgow area with one location in Edinburgh and one 120 m away: sorts by the nearest.
    ("Mobile Library", "Books on wheels.", &[], &["S12000046", "XS"], &[3, 5]),
    // A Region area makes a service national too; it never matches G2 1AL by area.
    ("Western Region Advice", "Advice across the west.", &["money-advice"], &["RW"], &[0]),
    // 4.9 km away, area-less: inside the default radius, outside 4 km.
    ("Southside Zebra Club", "Zumba and more.", &["exercise-get-fit"], &[], &[6]),
    // Health board match only (S08000021), no location.
    ("Clyde Health Line", "Call us about health.", &[], &["S08000021"], &[]),
];

/// Deterministic ids: `5e000000-0000-4000-8000-0000000000NN`, NN = position + 1.
pub fn service_id(position: usize) -> Uuid {
    Uuid::from_u128(0x5e00_0000_0000_4000_8000_0000_0000_0000 + position as u128 + 1)
}

/// The postcodes of the fixture.
pub fn postcodes() -> PostcodeDirectory {
    let pc = |code: &str, point: Point, areas: &[&str]| Postcode {
        code: code.into(),
        point,
        areas: areas.iter().map(|a| a.to_string()).collect(),
    };
    PostcodeDirectory {
        postcodes: vec![
            pc("EH1 1AA", Point { lat: 55.9533, lon: -3.1883 }, &["S12000036", "XS", "XB"]),
            pc("G2 1AL", G2, &["S12000046", "S08000021", "S37000015", "XS", "XB"]),
            pc("ML1 1AA", Point { lat: 55.7892, lon: -3.9910 }, &["S12000044", "S08000023", "XS", "XB"]),
            // A postcode whose codes are not on the list at all.
            pc("ZE1 0AA", Point { lat: 60.15, lon: -1.15 }, &["S12000099"]),
        ],
    }
}

/// Builds a directory from service specs (ids in order, every service run by one of two
/// organisations, each place a location of organisation 0).
pub fn directory_of(services: &[ServiceSpec]) -> Directory {
    let categories = categories();
    let last_edited = Timestamp(1_700_000_000_000_000);
    let org = |n: u128, name: &str| Organisation {
        id: Uuid::from_u128(0x0a00_0000_0000_4000_8000_0000_0000_0000 + n),
        name: name.into(),
        slug: name.to_lowercase().replace(' ', "-"),
        is_claimed: n == 1,
        last_edited,
        ..Organisation::default()
    };
    let mut organisations = vec![org(1, "Glasgow Care Network"), org(2, "Scotland Support")];
    let locations: Vec<Location> = PLACES
        .iter()
        .enumerate()
        .map(|(i, (name, point))| Location {
            id: Uuid::from_u128(0x9a00_0000_0000_4000_8000_0000_0000_0000 + i as u128 + 1),
            organisation: OrgIx::new(0),
            name: name.to_string(),
            description: String::new(),
            street_address: format!("{} High Street", i + 1),
            locality: "Glasgow".into(),
            region: String::new(),
            state: String::new(),
            postal_code: "G2 1AL".into(),
            country: "GB".into(),
            point: *point,
        })
        .collect();
    organisations[0].locations = LocationIx::all(locations.len()).collect();
    let services: Vec<Service> = services
        .iter()
        .enumerate()
        .map(|(i, (name, description, cats, areas, places))| {
            let organisation = OrgIx::new(i % 2);
            organisations[organisation].services.push(ServiceIx::new(i));
            Service {
                id: service_id(i),
                organisation,
                name: name.to_string(),
                slug: format!("{}-{}", name.to_lowercase().replace(' ', "-"), i + 1),
                description: description.to_string(),
                contact: Contact::default(),
                categories: cats.iter().map(|c| categories.by_slug(c).expect("known category")).collect(),
                service_areas: areas.iter().map(|a| area(a)).collect(),
                locations: places.iter().map(|&p| LocationIx::new(p)).collect(),
                last_updated: Timestamp(1_710_000_000_123_456 + i as i64),
            }
        })
        .collect();
    Directory {
        organisations,
        services,
        locations,
        categories,
        service_areas: AREAS
            .iter()
            .map(|(code, kind, name)| ServiceArea { code: code.to_string(), kind: *kind, name: name.to_string() })
            .collect(),
        postcodes: postcodes(),
    }
}

/// The fixture directory.
pub fn directory() -> Directory {
    directory_of(&SERVICES)
}

/// The search service over a directory.
pub fn state_of(dir: &Directory) -> Arc<AppState> {
    Arc::new(AppState::new(SearchIndex::build(dir, &publication())))
}

/// A tiny directory for unit tests: three services with names, descriptions, categories,
/// areas and locations.
#[cfg(test)]
pub(crate) fn tiny() -> Directory {
    let category =
        |slug: &str, name: &str, children| CategoryInput { id: None, name: name.into(), slug: slug.into(), children };
    let categories = CategoryTree::build(&[category(
        "activity",
        "Activity",
        vec![category("outdoor-pursuits", "Outdoor Pursuits", vec![])],
    )]);
    let service = |n: u128, name: &str, description: &str, categories: Vec<u16>, areas: Vec<u16>, locations| Service {
        id: Uuid::from_u128(n),
        organisation: OrgIx::new(0),
        name: name.into(),
        slug: format!("s-{n}"),
        description: description.into(),
        contact: Contact::default(),
        categories,
        service_areas: areas,
        locations,
        last_updated: Timestamp(0),
    };
    Directory {
        organisations: vec![Organisation {
            id: Uuid::from_u128(100),
            name: "Org".into(),
            slug: "org".into(),
            services: ServiceIx::all(3).collect(),
            locations: vec![LocationIx::new(0)],
            ..Organisation::default()
        }],
        services: vec![
            service(1, "Walking Group", "Gentle walks.", vec![1], vec![], vec![LocationIx::new(0)]),
            service(2, "Health Walks", "Walking for health.", vec![], vec![0], vec![]),
            service(3, "Money Advice", "Help with debt.", vec![0], vec![1], vec![LocationIx::new(0)]),
        ],
        locations: vec![Location {
            id: Uuid::from_u128(200),
            organisation: OrgIx::new(0),
            name: String::new(),
            description: String::new(),
            street_address: "1 Street".into(),
            locality: "Glasgow".into(),
            region: String::new(),
            state: String::new(),
            postal_code: "G2 1AL".into(),
            country: "GB".into(),
            point: Point { lat: 55.86, lon: -4.25 },
        }],
        categories,
        service_areas: vec![
            ServiceArea { code: "XS".into(), kind: AreaKind::Country, name: "Scotland".into() },
            ServiceArea { code: "S12000046".into(), kind: AreaKind::LocalAuthority, name: "Glasgow City".into() },
        ],
        postcodes: PostcodeDirectory {
            postcodes: vec![Postcode {
                code: "G2 1AL".into(),
                point: Point { lat: 55.8609, lon: -4.2514 },
                areas: vec!["S12000046".into(), "XS".into(), "XB".into()],
            }],
        },
    }
}
