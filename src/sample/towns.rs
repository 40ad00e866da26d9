//! The Scottish towns that synthetic postcodes, locations and organisations are placed in.
//!
//! Area codes are the ones a current NRS postcode file carries: for Glasgow, Fife, North
//! Lanarkshire, Perth and Kinross and the Fife, Tayside, Greater Glasgow and Clyde and
//! Lanarkshire health boards those are the post-2018 codes, which differ from the fixed list
//! in `service_areas.json`. [`list_code`] maps them back (the built-in alias table of
//! `crate::validate`), so that services only ever name codes of the list while postcodes
//! exercise the alias mapping.

/// Which (fictional, Ofcom drama-range) telephone numbers a town's organisations get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dial {
    /// 0141 496 0xxx.
    Glasgow,
    /// 0131 496 0xxx.
    Edinburgh,
    /// 01632 960xxx.
    Other,
}

/// One town: centre, postcode districts and the codes its postcodes carry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Town {
    /// Town name, used as locality.
    pub name: &'static str,
    /// Council area name as people write it in organisation names.
    pub area: &'static str,
    /// Latitude of the centre.
    pub lat: f64,
    /// Longitude of the centre.
    pub lon: f64,
    /// Postcode districts (outward codes) of the town; no district is shared.
    pub districts: &'static [&'static str],
    /// Council area code as postcode files carry it.
    pub council: &'static str,
    /// Health board code as postcode files carry it.
    pub health_board: &'static str,
    /// Integration authority code as postcode files carry it.
    pub integration_authority: &'static str,
    /// Relative size: share of postcodes and of organisations.
    pub weight: u32,
    /// Radius in kilometres within which its postcodes are scattered.
    pub radius_km: f64,
    /// Telephone numbering.
    pub dial: Dial,
}

#[allow(clippy::too_many_arguments)] // one row of a table, read positionally
const fn t(
    name: &'static str,
    area: &'static str,
    lat: f64,
    lon: f64,
    districts: &'static [&'static str],
    codes: [&'static str; 3],
    weight: u32,
    radius_km: f64,
    dial: Dial,
) -> Town {
    Town {
        name,
        area,
        lat,
        lon,
        districts,
        council: codes[0],
        health_board: codes[1],
        integration_authority: codes[2],
        weight,
        radius_km,
        dial,
    }
}

use Dial::{Edinburgh as E, Glasgow as G, Other as O};

// Council, health board, integration authority, as postcode files carry them.
const GLASGOW: [&str; 3] = ["S12000049", "S08000031", "S37000034"];
const EDINBURGH: [&str; 3] = ["S12000036", "S08000024", "S37000012"];
const ABERDEEN: [&str; 3] = ["S12000033", "S08000020", "S37000001"];
const ABERDEENSHIRE: [&str; 3] = ["S12000034", "S08000020", "S37000002"];
const MORAY: [&str; 3] = ["S12000020", "S08000020", "S37000019"];
const DUNDEE: [&str; 3] = ["S12000042", "S08000030", "S37000007"];
const ANGUS: [&str; 3] = ["S12000041", "S08000030", "S37000003"];
const PERTH: [&str; 3] = ["S12000048", "S08000030", "S37000033"];
const FIFE: [&str; 3] = ["S12000047", "S08000029", "S37000032"];
const HIGHLAND: [&str; 3] = ["S12000017", "S08000022", "S37000016"];
const ARGYLL: [&str; 3] = ["S12000035", "S08000022", "S37000004"];
const ORKNEY: [&str; 3] = ["S12000023", "S08000025", "S37000022"];
const SHETLAND: [&str; 3] = ["S12000027", "S08000026", "S37000026"];
const EILEAN_SIAR: [&str; 3] = ["S12000013", "S08000028", "S37000031"];
const RENFREWSHIRE: [&str; 3] = ["S12000038", "S08000031", "S37000024"];
const INVERCLYDE: [&str; 3] = ["S12000018", "S08000031", "S37000017"];
const EAST_RENFREWSHIRE: [&str; 3] = ["S12000011", "S08000031", "S37000011"];
const EAST_DUNBARTONSHIRE: [&str; 3] = ["S12000045", "S08000031", "S37000009"];
const WEST_DUNBARTONSHIRE: [&str; 3] = ["S12000039", "S08000031", "S37000029"];
const NORTH_LANARKSHIRE: [&str; 3] = ["S12000050", "S08000032", "S37000035"];
const SOUTH_LANARKSHIRE: [&str; 3] = ["S12000029", "S08000032", "S37000028"];
const NORTH_AYRSHIRE: [&str; 3] = ["S12000021", "S08000015", "S37000020"];
const EAST_AYRSHIRE: [&str; 3] = ["S12000008", "S08000015", "S37000008"];
const SOUTH_AYRSHIRE: [&str; 3] = ["S12000028", "S08000015", "S37000027"];
const EAST_LOTHIAN: [&str; 3] = ["S12000010", "S08000024", "S37000010"];
const MIDLOTHIAN: [&str; 3] = ["S12000019", "S08000024", "S37000018"];
const WEST_LOTHIAN: [&str; 3] = ["S12000040", "S08000024", "S37000030"];
const BORDERS: [&str; 3] = ["S12000026", "S08000016", "S37000025"];
const DUMFRIES: [&str; 3] = ["S12000006", "S08000017", "S37000006"];
const FALKIRK: [&str; 3] = ["S12000014", "S08000019", "S37000013"];
const STIRLING: [&str; 3] = ["S12000030", "S08000019", "S37000005"];
const CLACKMANNANSHIRE: [&str; 3] = ["S12000005", "S08000019", "S37000005"];

/// The towns, every council area of Scotland represented at least once.
pub(crate) const TOWNS: &[Town] = &[
    t(
        "Glasgow",
        "Glasgow",
        55.8642,
        -4.2518,
        &[
            "G1", "G2", "G3", "G4", "G5", "G11", "G12", "G13", "G14", "G15", "G20", "G21", "G22", "G23", "G31", "G32",
            "G33", "G34", "G40", "G41", "G42", "G43", "G44", "G45", "G51", "G52", "G53",
        ],
        GLASGOW,
        60,
        7.0,
        G,
    ),
    t(
        "Edinburgh",
        "Edinburgh",
        55.9533,
        -3.1883,
        &[
            "EH1", "EH2", "EH3", "EH4", "EH5", "EH6", "EH7", "EH8", "EH9", "EH10", "EH11", "EH12", "EH13", "EH14",
            "EH15", "EH16", "EH17",
        ],
        EDINBURGH,
        50,
        6.0,
        E,
    ),
    t(
        "Aberdeen",
        "Aberdeen",
        57.1497,
        -2.0943,
        &["AB10", "AB11", "AB12", "AB15", "AB16", "AB21", "AB22", "AB23", "AB24", "AB25"],
        ABERDEEN,
        22,
        5.0,
        O,
    ),
    t("Peterhead", "Aberdeenshire", 57.5058, -1.7981, &["AB42"], ABERDEENSHIRE, 2, 2.0, O),
    t("Fraserburgh", "Aberdeenshire", 57.6931, -2.0050, &["AB43"], ABERDEENSHIRE, 1, 2.0, O),
    t("Inverurie", "Aberdeenshire", 57.2836, -2.3733, &["AB51"], ABERDEENSHIRE, 1, 2.0, O),
    t("Stonehaven", "Aberdeenshire", 56.9637, -2.2114, &["AB39"], ABERDEENSHIRE, 1, 2.0, O),
    t("Elgin", "Moray", 57.6490, -3.3180, &["IV30"], MORAY, 2, 2.5, O),
    t("Forres", "Moray", 57.6094, -3.6190, &["IV36"], MORAY, 1, 2.0, O),
    t("Dundee", "Dundee", 56.4620, -2.9707, &["DD1", "DD2", "DD3", "DD4", "DD5"], DUNDEE, 15, 4.0, O),
    t("Arbroath", "Angus", 56.5630, -2.5830, &["DD11"], ANGUS, 2, 2.0, O),
    t("Forfar", "Angus", 56.6431, -2.8890, &["DD8"], ANGUS, 1, 2.0, O),
    t("Montrose", "Angus", 56.7080, -2.4670, &["DD10"], ANGUS, 1, 2.0, O),
    t("Perth", "Perth and Kinross", 56.3950, -3.4308, &["PH1", "PH2"], PERTH, 5, 3.0, O),
    t("Pitlochry", "Perth and Kinross", 56.7040, -3.7290, &["PH16"], PERTH, 1, 1.5, O),
    t("Kirkcaldy", "Fife", 56.1107, -3.1674, &["KY1", "KY2"], FIFE, 5, 3.0, O),
    t("Dunfermline", "Fife", 56.0717, -3.4522, &["KY11", "KY12"], FIFE, 5, 3.0, O),
    t("Glenrothes", "Fife", 56.1953, -3.1740, &["KY6", "KY7"], FIFE, 4, 2.5, O),
    t("St Andrews", "Fife", 56.3398, -2.7967, &["KY16"], FIFE, 1, 1.5, O),
    t("Inverness", "Highland", 57.4778, -4.2247, &["IV1", "IV2", "IV3"], HIGHLAND, 9, 4.0, O),
    t("Fort William", "Highland", 56.8198, -5.1052, &["PH33"], HIGHLAND, 1, 2.0, O),
    t("Thurso", "Highland", 58.5936, -3.5221, &["KW14"], HIGHLAND, 1, 1.5, O),
    t("Wick", "Highland", 58.4389, -3.0937, &["KW1"], HIGHLAND, 1, 1.5, O),
    t("Portree", "Highland", 57.4125, -6.1963, &["IV51"], HIGHLAND, 1, 1.5, O),
    t("Oban", "Argyll and Bute", 56.4150, -5.4710, &["PA34"], ARGYLL, 1, 1.5, O),
    t("Helensburgh", "Argyll and Bute", 56.0037, -4.7330, &["G84"], ARGYLL, 1, 2.0, O),
    t("Dunoon", "Argyll and Bute", 55.9470, -4.9240, &["PA23"], ARGYLL, 1, 1.5, O),
    t("Kirkwall", "Orkney", 58.9810, -2.9600, &["KW15"], ORKNEY, 1, 1.5, O),
    t("Lerwick", "Shetland", 60.1545, -1.1494, &["ZE1"], SHETLAND, 1, 1.5, O),
    t("Stornoway", "Eilean Siar", 58.2090, -6.3866, &["HS1"], EILEAN_SIAR, 1, 1.5, O),
    t("Paisley", "Renfrewshire", 55.8466, -4.4236, &["PA1", "PA2", "PA3"], RENFREWSHIRE, 8, 3.0, G),
    t("Greenock", "Inverclyde", 55.9480, -4.7640, &["PA15", "PA16"], INVERCLYDE, 4, 2.5, O),
    t("Barrhead", "East Renfrewshire", 55.7990, -4.3920, &["G78"], EAST_RENFREWSHIRE, 1, 1.5, G),
    t("Newton Mearns", "East Renfrewshire", 55.7730, -4.3340, &["G77"], EAST_RENFREWSHIRE, 2, 2.0, G),
    t("Kirkintilloch", "East Dunbartonshire", 55.9390, -4.1530, &["G66"], EAST_DUNBARTONSHIRE, 2, 2.0, G),
    t("Bearsden", "East Dunbartonshire", 55.9150, -4.3320, &["G61"], EAST_DUNBARTONSHIRE, 2, 2.0, G),
    t("Clydebank", "West Dunbartonshire", 55.9010, -4.4050, &["G81"], WEST_DUNBARTONSHIRE, 3, 2.0, G),
    t("Dumbarton", "West Dunbartonshire", 55.9440, -4.5700, &["G82"], WEST_DUNBARTONSHIRE, 2, 2.0, O),
    t("Motherwell", "North Lanarkshire", 55.7890, -3.9910, &["ML1"], NORTH_LANARKSHIRE, 3, 2.5, O),
    t("Airdrie", "North Lanarkshire", 55.8660, -3.9800, &["ML6"], NORTH_LANARKSHIRE, 4, 2.5, O),
    t("Coatbridge", "North Lanarkshire", 55.8620, -4.0270, &["ML5"], NORTH_LANARKSHIRE, 4, 2.5, O),
    t("Cumbernauld", "North Lanarkshire", 55.9460, -3.9900, &["G67", "G68"], NORTH_LANARKSHIRE, 5, 3.0, O),
    t("Hamilton", "South Lanarkshire", 55.7770, -4.0390, &["ML3"], SOUTH_LANARKSHIRE, 5, 3.0, O),
    t("East Kilbride", "South Lanarkshire", 55.7640, -4.1770, &["G74", "G75"], SOUTH_LANARKSHIRE, 7, 3.0, G),
    t("Lanark", "South Lanarkshire", 55.6730, -3.7820, &["ML11"], SOUTH_LANARKSHIRE, 1, 2.0, O),
    t("Irvine", "North Ayrshire", 55.6190, -4.6570, &["KA11", "KA12"], NORTH_AYRSHIRE, 3, 2.5, O),
    t("Largs", "North Ayrshire", 55.7940, -4.8670, &["KA30"], NORTH_AYRSHIRE, 1, 1.5, O),
    t("Kilmarnock", "East Ayrshire", 55.6110, -4.4960, &["KA1", "KA3"], EAST_AYRSHIRE, 5, 3.0, O),
    t("Ayr", "South Ayrshire", 55.4580, -4.6290, &["KA7", "KA8"], SOUTH_AYRSHIRE, 5, 3.0, O),
    t("Haddington", "East Lothian", 55.9560, -2.7810, &["EH41"], EAST_LOTHIAN, 1, 1.5, E),
    t("Musselburgh", "East Lothian", 55.9416, -3.0537, &["EH21"], EAST_LOTHIAN, 2, 2.0, E),
    t("Dalkeith", "Midlothian", 55.8940, -3.0680, &["EH22"], MIDLOTHIAN, 2, 2.0, E),
    t("Livingston", "West Lothian", 55.8860, -3.5230, &["EH54"], WEST_LOTHIAN, 6, 3.0, O),
    t("Bathgate", "West Lothian", 55.9024, -3.6430, &["EH48"], WEST_LOTHIAN, 2, 2.0, O),
    t("Galashiels", "Scottish Borders", 55.6170, -2.8060, &["TD1"], BORDERS, 1, 2.0, O),
    t("Hawick", "Scottish Borders", 55.4220, -2.7870, &["TD9"], BORDERS, 1, 2.0, O),
    t("Peebles", "Scottish Borders", 55.6520, -3.1880, &["EH45"], BORDERS, 1, 1.5, O),
    t("Dumfries", "Dumfries and Galloway", 55.0700, -3.6050, &["DG1", "DG2"], DUMFRIES, 3, 3.0, O),
    t("Stranraer", "Dumfries and Galloway", 54.9030, -5.0240, &["DG9"], DUMFRIES, 1, 1.5, O),
    t("Falkirk", "Falkirk", 56.0019, -3.7839, &["FK1", "FK2"], FALKIRK, 4, 3.0, O),
    t("Grangemouth", "Falkirk", 56.0120, -3.7170, &["FK3"], FALKIRK, 2, 2.0, O),
    t("Stirling", "Stirling", 56.1165, -3.9369, &["FK7", "FK8", "FK9"], STIRLING, 4, 3.0, O),
    t("Alloa", "Clackmannanshire", 56.1160, -3.7930, &["FK10"], CLACKMANNANSHIRE, 2, 2.0, O),
];

/// Maps a code as postcode files carry it to the code of the fixed service-area list
/// through the built-in aliases (behaviour.md, "Search" item 2); other codes are the same
/// in both.
pub(crate) fn list_code(code: &str) -> &str {
    crate::validate::BUILT_IN_ALIASES.iter().find(|(from, _)| *from == code).map_or(code, |(_, to)| to)
}
