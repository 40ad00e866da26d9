//! Word pools and small text builders for realistic names, addresses and descriptions.
//!
//! Contact details are deliberately fictional: web sites and email addresses live under
//! `example.org` (reserved by RFC 2606) and telephone numbers are in Ofcom's drama ranges,
//! so nobody browsing the sample dataset reaches a real organisation.

use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::towns::{Dial, Town};

/// Organisation name templates (`{T}` the town, `{A}` its council area), each with the
/// category slug its services mostly come under (`""`: anything).
const ORGANISATION_NAMES: &[(&str, &str)] = &[
    ("{T} Foodbank", "food-nutrition"),
    ("{A} Carers Network", "health-social-care-services"),
    ("{T} Befriending Trust", "befriending"),
    ("{A} Befriending Trust", "befriending"),
    ("{T} & District Men's Shed", "activity"),
    ("{T} Citizens Advice Bureau", "money"),
    ("{A} Women's Aid", "safe-housing"),
    ("{T} Community Transport", "transport-mobility"),
    ("Friends of {T} Community Garden", "community-garden"),
    ("{A} Association for Mental Health", "mental-health"),
    ("{T} Over 50s Club", "social-activity"),
    ("{A} Alzheimer's Support", "dementia"),
    ("{T} Youth & Community Trust", "children-families"),
    ("{A} Disability Forum", "disability"),
    ("{T} Recovery Café", "addiction"),
    ("{A} Advocacy Project", "independent-advocacy"),
    ("{T} Bereavement Support", "end-life-care"),
    ("{A} Parkinson's Group", "parkinsons-disease"),
    ("{T} Development Trust", ""),
    ("{T} Credit Union", "money"),
    ("{A} Carers' Centre", "health-social-care-services"),
    ("{T} Family Support Project", "parent-family-support"),
    ("{A} Rape Crisis", "sexual-violence"),
    ("{T} Baby Bank", "goods"),
    ("{A} Stroke Club", "stroke"),
    ("{T} Housing Association", "housing-and-homelessness"),
    ("{T} Health Walks", "physical-activity"),
    ("{A} Deaf Club", "sensory-disability"),
    ("{T} Tenants' & Residents' Association", "housing-and-homelessness"),
    ("{A} Sensory Support", "sensory-disability"),
    ("{T} Community Fridge", "food-nutrition"),
    ("{T} Good Neighbours", "support-network"),
    ("Home-Start {T}", "children-families"),
    ("{A} Volunteer Centre", ""),
    ("{A} Mental Health Forum", "mental-health"),
    ("{T} Chinese Community Association", ""),
    ("{T} Autism Parents Group", "autism"),
    ("{A} Wellbeing Network", ""),
    ("{T} Allotment Society", "community-garden"),
    ("{T} Arts & Crafts Collective", "creative-cultural-activity"),
    ("{A} Money Advice Service", "money"),
    ("{T} Cancer Support", "cancer"),
    ("{A} Digital Inclusion Project", "digital-literacy"),
    ("{T} Job Club", "skills-training"),
    ("{A} Sexual Health Network", "sexual-health"),
    ("{T} Diabetes Group", "diabetes"),
    ("Café Còmhla", "community-cafe"),
    ("Cùram Còmhla {T}", "health-social-care-services"),
    ("Ceòl is Slàinte {T}", "music"),
    ("St Ninian's Parish Church", ""),
    ("Our Lady & St Mungo's Community Group", ""),
];

/// Names that only fit the Western Isles.
const EILEAN_SIAR_NAMES: &[(&str, &str)] = &[
    ("Comhairle nan Eilean Siar", ""),
    ("Cùram Eilean Siar", "health-social-care-services"),
    ("Befriending Leòdhas agus na Hearadh", "befriending"),
];

/// Organisation kinds for descriptions.
const ORGANISATION_KINDS: &[&str] = &[
    "a registered Scottish charity",
    "a community interest company",
    "a voluntary organisation",
    "a social enterprise",
    "a community group run by local volunteers",
    "a small, user-led charity",
    "a company limited by guarantee with charitable status",
];

/// Mission statements for organisation descriptions.
const MISSIONS: &[&str] = &[
    "We support {W} to live well in their own community.",
    "Our aim is to reduce isolation and loneliness among {W}.",
    "We believe everyone should get the help they need, when they need it.",
    "We work alongside the local Health & Social Care Partnership and other charities.",
    "Everything we do is shaped by the people who use our services.",
    "We have been part of the community for over {N} years.",
    "Most of our work is delivered by trained volunteers.",
    "We're always looking for new volunteers – get in touch if you'd like to help.",
];

/// Audiences of a health condition: `{C}` is its name, lower-cased.
const CONDITION_AUDIENCES: &[&str] =
    &["people living with {C}", "anyone affected by {C}", "people with {C} and their families"];

/// Audiences of any service.
const AUDIENCES: &[&str] = &[
    "older people",
    "adults",
    "young people aged 12 to 25",
    "children and families",
    "unpaid carers",
    "veterans and their families",
    "people on low incomes",
    "women",
    "men",
    "LGBT+ people",
    "people in recovery",
    "refugees and asylum seekers",
    "people with a learning disability",
    "parents of young children",
];

/// Service descriptions: the opening sentence. `{S}` service, `{O}` organisation,
/// `{X}` what it offers, `{W}` audience, `{T}` town, `{A}` area.
const OPENINGS: &[&str] = &[
    "{S} offers {X} for {W} in and around {T}.",
    "Run by {O}, {S} provides {X} for {W}.",
    "We provide {X} for {W} across {A}.",
    "A friendly, volunteer-led service offering {X} to {W} in {T}.",
    "{S} is a free service providing {X} for {W}.",
    "Through {S}, {O} gives {W} access to {X}.",
];

/// Further sentences for service descriptions.
const DETAILS: &[&str] = &[
    "Sessions run every {D} from {H}.",
    "No referral is needed – just drop in.",
    "Referrals are accepted from GPs, social workers and by self-referral.",
    "All our volunteers are PVG checked and fully trained.",
    "The service is free and confidential.",
    "We can arrange transport for people who can't travel on their own.",
    "Tea, coffee and a warm welcome are always on offer.",
    "Interpreters can be arranged, including British Sign Language.",
    "Please phone ahead if you need wheelchair access.",
    "We also signpost people to other local services.",
    "Places are limited, so please book in advance.",
    "Family members and carers are welcome to come along too.",
    "Support is available by phone, video call or face to face.",
    "There is a small charge of £2 per session, which can be waived.",
    "Our staff and volunteers include people with lived experience.",
    "We meet in a fully accessible building with a hearing loop.",
    "Outside opening hours, please leave a message and we'll call you back.",
    "We work closely with the local health and social care partnership.",
];

const DAYS: &[&str] = &[
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Monday and Thursday",
    "Tuesday and Friday",
    "weekday",
];

const HOURS: &[&str] =
    &["10am to 12pm", "10am to 2pm", "1pm to 3pm", "2pm to 4pm", "6pm to 8pm", "9.30am to 4.30pm", "7pm to 9pm"];

/// Service names built from the category name (`{C}`) and the town (`{T}`), by top-level
/// category: the conditions read naturally in them ("Dementia Support Group").
fn generic(top: &str) -> &'static [&'static str] {
    match top {
        "conditions" => &[
            "{C} Support Group",
            "{C} Drop-in",
            "{C} Information Service",
            "Living Well with {C}",
            "{C} Peer Support",
            "{C} Nurse Clinic",
            "{T} {C} Group",
            "{C} Café",
            "{C} Helpline",
        ],
        "activity" => &["{T} {C} Group", "{C} Sessions", "{C} Club", "{C} for Wellbeing", "Community {C}"],
        "education-employability" => &["{C} Classes", "{C} Drop-in", "{T} {C} Programme"],
        _ => &["{T} {C}", "{C} Service", "{C} Project"],
    }
}

/// Service names and what they offer, for each top-level category slug.
fn themed(top: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match top {
        "housing-and-homelessness" => (
            &[
                "Housing Advice Surgery",
                "Tenancy Sustainment Service",
                "Homeless Outreach",
                "Care & Repair",
                "Handyperson Service",
                "Rough Sleepers Drop-in",
                "Supported Accommodation",
                "{T} Housing Options",
            ],
            &[
                "housing advice and tenancy support",
                "small repairs and adaptations at home",
                "emergency accommodation and outreach",
            ],
        ),
        "food-nutrition" => (
            &[
                "Community Pantry",
                "Emergency Food Parcels",
                "Lunch Club",
                "Breakfast Club",
                "Community Café",
                "Cookery on a Budget",
                "Community Growing Space",
                "Holiday Meals Programme",
                "{T} Foodbank",
            ],
            &[
                "emergency food parcels",
                "hot, healthy meals in good company",
                "fresh fruit and vegetables at low cost",
                "cooking and growing sessions",
            ],
        ),
        "money" => (
            &[
                "Money Advice Service",
                "Welfare Rights Advice",
                "Energy Advice Sessions",
                "Benefits Check Clinic",
                "Debt Advice Drop-in",
                "Fuel Poverty Support",
            ],
            &[
                "free, impartial money and debt advice",
                "benefit checks and help with forms",
                "advice on cutting energy bills",
            ],
        ),
        "sexual-health" => (
            &[
                "Sexual Health Clinic",
                "Rape Crisis Support",
                "Pregnancy Support",
                "Menopause Café",
                "LGBT+ Health Drop-in",
                "Men's Health Checks",
            ],
            &[
                "confidential sexual health advice and testing",
                "specialist support after sexual violence",
                "information and support on women's and men's health",
            ],
        ),
        "conditions" => (
            &[
                "Condition Management Programme",
                "Long-term Conditions Support",
                "Recovery Café",
                "Mental Health Drop-in",
                "Living with Cancer",
                "Stroke Club",
                "Memory Café",
            ],
            &[
                "information, peer support and practical help",
                "self-management courses",
                "one-to-one support from trained volunteers",
            ],
        ),
        "transport-mobility" => (
            &[
                "Dial-a-Bus",
                "Community Car Scheme",
                "Shopmobility",
                "Wheelchair Loan Service",
                "Hospital Transport",
                "Volunteer Drivers",
            ],
            &["door-to-door transport", "lifts to appointments with volunteer drivers", "wheelchair and scooter loans"],
        ),
        "rights-representation" => (
            &[
                "Independent Advocacy",
                "Family Mediation",
                "Community Council Surgery",
                "Immigration Advice",
                "Interpreting Service",
                "Legal Advice Clinic",
                "Adult Protection Helpline",
            ],
            &[
                "independent advocacy",
                "free legal information and representation",
                "mediation for families and neighbours",
            ],
        ),
        "health-social-care-services" => (
            &[
                "Befriending Service",
                "Carers' Respite Breaks",
                "Day Care Centre",
                "Bereavement Support",
                "Peer Support Group",
                "Home Visiting Service",
                "Telephone Befriending",
                "Hospice at Home",
                "Independent Living Support",
                "Mentoring Programme",
                "Counselling Service",
            ],
            &[
                "befriending and regular social contact",
                "short breaks and respite for carers",
                "counselling and emotional support",
                "practical support to live independently",
            ],
        ),
        "goods" => (
            &[
                "Baby Bank",
                "Clothing Bank",
                "Furniture Reuse Project",
                "Equipment Loan Store",
                "Toy Library",
                "Christmas Gift Appeal",
            ],
            &[
                "free clothing, baby items and household goods",
                "donated furniture and white goods",
                "equipment on loan",
            ],
        ),
        "activity" => (
            &[
                "Health Walks",
                "Chair Yoga",
                "Walking Football",
                "Community Choir",
                "Knit & Natter",
                "Men's Shed",
                "Gardening Club",
                "Tea Dance",
                "Ceilidh Club",
                "Camera Club",
            ],
            &[
                "gentle exercise and social activities",
                "creative and cultural activities",
                "outdoor activities and day trips",
            ],
        ),
        "education-employability" => (
            &[
                "Digital Drop-in",
                "Employability Support",
                "Adult Learning Classes",
                "Get Online Sessions",
                "Job Club",
                "Parenting Course",
                "ESOL Conversation Café",
            ],
            &[
                "help with computers, phones and getting online",
                "support into training, volunteering and work",
                "informal adult learning",
            ],
        ),
        "children-families" => (
            &[
                "Parent & Toddler Group",
                "Family Support Service",
                "Youth Club",
                "After School Club",
                "Play Sessions",
                "Young Carers Project",
            ],
            &[
                "support for parents and families",
                "safe, fun activities for children and young people",
                "early years play and learning",
            ],
        ),
        _ => (&["Community Support Service"], &["information and support"]),
    }
}

const LOCATION_NAMES: &[&str] = &[
    "Community Hall",
    "Community Centre",
    "Town Hall",
    "Health Centre",
    "Library",
    "Church Hall",
    "Resource Centre",
    "The Hub",
    "Scout Hall",
    "Leisure Centre",
    "Family Centre",
    "Parish Church Hall",
    "Village Hall",
    "Carers Centre",
    "Neighbourhood Centre",
    "{T} Community Centre",
    "{T} Library",
    "St Columba's Church Hall",
    "Taigh Cèilidh",
    "The Wellbeing Centre",
];

const STREETS: &[&str] = &[
    "High Street",
    "Main Street",
    "Church Street",
    "King Street",
    "Queen Street",
    "Station Road",
    "Victoria Road",
    "Park Road",
    "Mill Lane",
    "George Street",
    "Castle Street",
    "Bridge Street",
    "Union Street",
    "Market Street",
    "School Road",
    "Kirk Wynd",
    "Glebe Road",
    "Burnside",
    "Hillview Crescent",
    "Shore Road",
    "Academy Street",
    "St Mary's Wynd",
    "Well Brae",
    "Viewfield Terrace",
    "Woodlands Drive",
    "Manse Road",
    "Croft Road",
    "Harbour Road",
    "Bank Street",
    "Commercial Street",
];

const ESTATES: &[&str] =
    &["Riverside Business Park", "Southfield Industrial Estate", "Enterprise Centre", "Links Business Centre"];

const LOCATION_DESCRIPTIONS: &[&str] = &[
    "Entrance at the rear of the building, level access.",
    "Ground floor, accessible toilet available.",
    "Free parking behind the hall.",
    "Two minutes' walk from the bus station.",
    "Please ring the buzzer on arrival.",
];

/// Fills `{T}` and `{A}` from the town.
fn place(template: &str, town: &Town) -> String {
    template.replace("{T}", town.name).replace("{A}", town.area)
}

/// An organisation name for a town, and the category slug its work centres on (`""`:
/// none in particular).
pub(crate) fn organisation_name(rng: &mut ChaCha8Rng, town: &Town) -> (String, &'static str) {
    let pool = if town.name == "Stornoway" && rng.gen_bool(0.4) { EILEAN_SIAR_NAMES } else { ORGANISATION_NAMES };
    let (template, theme) = pool[rng.gen_range(0..pool.len())];
    (place(template, town), theme)
}

/// Every category slug an organisation template names (for tests).
#[cfg(test)]
pub(crate) fn theme_slugs() -> impl Iterator<Item = &'static str> {
    ORGANISATION_NAMES.iter().chain(EILEAN_SIAR_NAMES).map(|(_, theme)| *theme).filter(|t| !t.is_empty())
}

/// An organisation description of two to four sentences (`condition`: the category is a
/// health condition).
pub(crate) fn organisation_description(
    rng: &mut ChaCha8Rng,
    name: &str,
    town: &Town,
    category: &str,
    condition: bool,
) -> String {
    let kind = pick(rng, ORGANISATION_KINDS);
    let mut parts = vec![if rng.gen_bool(0.5) {
        format!("{name} is {kind} based in {}.", town.name)
    } else {
        format!("{name} is {kind} working across {}.", town.area)
    }];
    let n = rng.gen_range(1..=3);
    for m in choose_distinct(rng, MISSIONS, n) {
        let audience = audience(rng, category, condition);
        let years = rng.gen_range(5..=40).to_string();
        parts.push(m.replace("{W}", &audience).replace("{N}", &years));
    }
    join_sentences(rng, &parts)
}

/// A service name for the category (`top` is its top-level slug, `name` its display name,
/// `is_top` whether it is the top level itself).
pub(crate) fn service_name(rng: &mut ChaCha8Rng, top: &str, category_name: &str, is_top: bool, town: &Town) -> String {
    let (names, _) = themed(top);
    let from_category = match top {
        "conditions" => 0.8,
        "activity" | "education-employability" => 0.5,
        _ => 0.3,
    };
    if is_top || !rng.gen_bool(from_category) {
        place(pick(rng, names), town)
    } else {
        place(pick(rng, generic(top)), town).replace("{C}", category_name)
    }
}

/// A service description of two to five sentences, sometimes split by CR LF.
pub(crate) fn service_description(
    rng: &mut ChaCha8Rng,
    service: &str,
    organisation: &str,
    top: &str,
    category_name: &str,
    town: &Town,
) -> String {
    let (_, offers) = themed(top);
    let condition = top == "conditions";
    let offer = if condition && rng.gen_bool(0.5) {
        format!("information, advice and support about {}", lower(category_name))
    } else {
        pick(rng, offers).to_string()
    };
    let audience = audience(rng, category_name, condition);
    let opening = pick(rng, OPENINGS)
        .replace("{S}", service)
        .replace("{O}", organisation)
        .replace("{X}", &offer)
        .replace("{W}", &audience);
    let mut parts = vec![place(&opening, town)];
    let n = rng.gen_range(1..=4);
    for d in choose_distinct(rng, DETAILS, n) {
        let day = pick(rng, DAYS);
        let hours = pick(rng, HOURS);
        parts.push(d.replace("{D}", day).replace("{H}", hours));
    }
    join_sentences(rng, &parts)
}

/// A street address: house number and street, a flat, a unit or a named building.
pub(crate) fn street_address(rng: &mut ChaCha8Rng) -> String {
    let street = pick(rng, STREETS);
    match rng.gen_range(0..10) {
        0 => format!("Unit {}, {}", rng.gen_range(1..=24), pick(rng, ESTATES)),
        1 => format!("{}/{} {street}", rng.gen_range(1..=140), rng.gen_range(1..=4)),
        2 => format!("Burns House, {} {street}", rng.gen_range(1..=90)),
        _ => format!("{} {street}", rng.gen_range(1..=220)),
    }
}

/// A location name, or `""` for a plain address.
pub(crate) fn location_name(rng: &mut ChaCha8Rng, town: &Town) -> String {
    if rng.gen_bool(0.45) { place(pick(rng, LOCATION_NAMES), town) } else { String::new() }
}

/// A short location description, or `""`.
pub(crate) fn location_description(rng: &mut ChaCha8Rng) -> String {
    if rng.gen_bool(0.15) { pick(rng, LOCATION_DESCRIPTIONS).to_owned() } else { String::new() }
}

/// A fictional telephone number in the drama range of the town's area, sometimes a mobile.
pub(crate) fn phone(rng: &mut ChaCha8Rng, town: &Town) -> String {
    let n = rng.gen_range(0..1000);
    if rng.gen_bool(0.15) {
        return format!("07700 900{n:03}");
    }
    match town.dial {
        Dial::Glasgow => format!("0141 496 0{n:03}"),
        Dial::Edinburgh => format!("0131 496 0{n:03}"),
        Dial::Other => format!("01632 960{n:03}"),
    }
}

/// A free-phone helpline number (drama range).
pub(crate) fn helpline(rng: &mut ChaCha8Rng) -> String {
    format!("0808 157 0{:03}", rng.gen_range(0..1000))
}

/// ASCII folding of a name into lower-case words joined by `sep`.
pub(crate) fn fold(name: &str, sep: &str) -> String {
    deunicode::deunicode(name)
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(sep)
}

/// A social-media handle: the name's words capitalised and run together, at most 15 chars.
pub(crate) fn handle(name: &str) -> String {
    let mut out: String = deunicode::deunicode(name)
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            cs.next().map(|f| f.to_ascii_uppercase().to_string() + cs.as_str()).unwrap_or_default()
        })
        .collect();
    out.truncate(15);
    out
}

/// Who a service is for; people with the condition when the category is one.
fn audience(rng: &mut ChaCha8Rng, category_name: &str, condition: bool) -> String {
    if condition && rng.gen_bool(0.6) {
        pick(rng, CONDITION_AUDIENCES).replace("{C}", &lower(category_name))
    } else {
        pick(rng, AUDIENCES).to_owned()
    }
}

/// Lower-cases a category name for use inside a sentence, keeping acronyms and the
/// names of people that conditions are named after.
pub(crate) fn lower(name: &str) -> String {
    const KEEP: &[&str] = &["Parkinsons", "Parkinson's", "Huntingtons", "Huntington's", "Tourette", "Alzheimer's"];
    name.split(' ')
        .map(|w| {
            let uppers = w.chars().filter(char::is_ascii_uppercase).count();
            if uppers > 1 || KEEP.contains(&w) { w.to_owned() } else { w.to_lowercase() }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Joins sentences with spaces, or (sometimes) into paragraphs separated by CR LF, the way
/// text pasted from a web form arrives.
fn join_sentences(rng: &mut ChaCha8Rng, parts: &[String]) -> String {
    let sep = match rng.gen_range(0..20) {
        0..=1 => "\r\n",
        2 => "\r\n\r\n",
        _ => " ",
    };
    parts.join(sep)
}

/// One element of a non-empty pool.
pub(crate) fn pick<'a>(rng: &mut ChaCha8Rng, pool: &'a [&'a str]) -> &'a str {
    pool[rng.gen_range(0..pool.len())]
}

fn choose_distinct<'a>(rng: &mut ChaCha8Rng, pool: &'a [&'a str], n: usize) -> Vec<&'a str> {
    pool.choose_multiple(rng, n).copied().collect()
}
