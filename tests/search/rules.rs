//! The search service, rule by rule (behaviour.md: Search, Errors, Routing, JSON or HTML),
//! through `app(state).oneshot(request)` over a hand-made directory around Glasgow.

use crate::support::*;
use axum::http::Method;
use serde_json::json;

const V4: &str = "/api/v4/services/";

async fn names(query: &str) -> Vec<String> {
    let state = state_of(&directory());
    let answer = get(&state, &format!("{V4}?{query}")).await;
    assert_eq!(answer.status, 200, "{query}: {}", String::from_utf8_lossy(&answer.body));
    answer.names()
}

async fn count(query: &str) -> u64 {
    let state = state_of(&directory());
    get(&state, &format!("{V4}?{query}")).await.json()["count"].as_u64().expect("count")
}

// ---- Search 1–3: which services match a postcode ----

#[tokio::test]
async fn postcode_search_orders_by_distance_then_relevance_name_id() {
    assert_eq!(
        names("postcode=G2+1AL&page_size=100").await,
        [
            "Drop-in Centre", // area-less, 90 m
            "Mobile Library", // Glasgow area; nearest of its two locations is 120 m
            "Park Strollers", // area-less, 3.2 km
            "Apple Club",     // five at 3.4 km: by name ...
            "Listening Ear",
            "The Counselling Rooms",
            "Twin Service", // ... then by id
            "Twin Service",
            "Southside Zebra Club", // area-less, 4.9 km
            "Clyde Health Line",    // no location: after all those with one, by name
            "Glasgow Foodbank",
            "Scotland Helpline",
        ]
    );
    let state = state_of(&directory());
    let json = get(&state, &format!("{V4}?postcode=G2+1AL&page_size=100")).await.json();
    let twins: Vec<&str> = json["data"].as_array().unwrap()[6..8].iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(twins, [service_id(8).to_string(), service_id(9).to_string()]);
}

#[tokio::test]
async fn area_match_without_any_location() {
    let found = names("postcode=G2+1AL&radius=0&page_size=100").await;
    assert!(found.contains(&"Glasgow Foodbank".to_string()));
    assert!(found.contains(&"Clyde Health Line".to_string()), "health board code");
    assert!(found.contains(&"Scotland Helpline".to_string()), "XS");
}

#[tokio::test]
async fn radius_match_without_areas() {
    assert!(names("postcode=G2+1AL").await.contains(&"Park Strollers".to_string()));
    // Park Strollers is 3.2 km away: outside 3000 m, inside 3300 m.
    assert!(!names("postcode=G2+1AL&radius=3000&page_size=100").await.contains(&"Park Strollers".to_string()));
    assert!(names("postcode=G2+1AL&radius=3300&page_size=100").await.contains(&"Park Strollers".to_string()));
    // Radius 0: only what matches by area.
    assert_eq!(
        names("postcode=G2+1AL&radius=0&page_size=100").await,
        ["Mobile Library", "Clyde Health Line", "Glasgow Foodbank", "Scotland Helpline"]
    );
    // A large radius reaches Edinburgh's area-less café.
    assert!(names("postcode=G2+1AL&radius=100000&page_size=100").await.contains(&"Edinburgh Community Cafe".into()));
}

#[tokio::test]
async fn a_nearby_service_of_another_council_is_not_shown() {
    // 90 m from G2 1AL but serving only North Lanarkshire (and one serving a Region).
    let near_glasgow = names("postcode=G2+1AL&radius=100000&page_size=100").await;
    assert!(!near_glasgow.contains(&"Lanarkshire Money Advice".to_string()));
    assert!(!near_glasgow.contains(&"Western Region Advice".to_string()));
    // Shown where it serves, 17 km from its location.
    assert!(names("postcode=ML1+1AA&radius=0").await.contains(&"Lanarkshire Money Advice".to_string()));
}

#[tokio::test]
async fn a_postcode_whose_codes_match_no_area() {
    // ZE1 0AA has no known area code and nothing near: page 1 exists, empty.
    let state = state_of(&directory());
    let answer = get(&state, &format!("{V4}?postcode=ZE1+0AA")).await;
    assert_eq!(answer.status, 200);
    let json = answer.json();
    assert_eq!(
        (json["count"].clone(), json["next"].clone(), json["previous"].clone()),
        (json!(0), json!(null), json!(null))
    );
    assert_eq!(json["data"], json!([]));
}

#[test]
fn a_2019_coded_glasgow_postcode_matches_the_listed_area_through_the_alias() {
    // Through the real loader: the postcode file carries S12000049/S08000031/S37000034, the
    // list S12000046/S08000021/S37000015 (behaviour.md, Search 2).
    let input = tempfile::tempdir().unwrap();
    let path = input.path();
    std::fs::create_dir(path.join("postcodes")).unwrap();
    std::fs::write(path.join("categories.json"), r#"[{"name": "Food", "slug": "food", "sub_categories": []}]"#)
        .unwrap();
    std::fs::write(
        path.join("service_areas.json"),
        r#"[{"code": "S12000046", "type": "Local Authority", "name": "Glasgow City"},
            {"code": "S12000033", "type": "Local Authority", "name": "Aberdeen City"}]"#,
    )
    .unwrap();
    std::fs::write(
        path.join("organisations.jsonl"),
        r#"{"id": "0a000000-0000-4000-8000-000000000001", "name": "Org", "last_edited": "2024-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    std::fs::write(path.join("locations.jsonl"), "").unwrap();
    std::fs::write(
        path.join("services.jsonl"),
        concat!(
            r#"{"id": "5e000000-0000-4000-8000-000000000001", "organisation_id": "0a000000-0000-4000-8000-000000000001", "name": "Glasgow Only", "service_areas": ["S12000046"], "last_updated": "2024-01-01T00:00:00Z"}"#,
            "\n",
            r#"{"id": "5e000000-0000-4000-8000-000000000002", "organisation_id": "0a000000-0000-4000-8000-000000000001", "name": "Aberdeen Only", "service_areas": ["S12000033"], "last_updated": "2024-01-01T00:00:00Z"}"#,
            "\n"
        ),
    )
    .unwrap();
    std::fs::write(
        path.join("postcodes/small.csv"),
        r#""G2 1AL","G2","G2 1",1/8/1973 00:00:00,,"258900","665400",55.86045205,-4.24858105,"N","S12000049","S14000029","S17000017","S16000117","S13002976","S08000031","S08000007","09","S37000034","S00116592""#,
    )
    .unwrap();
    let dir = svcdir::validate::load_directory(path).unwrap_or_else(|e| panic!("{e:?}"));
    let state = state_of(&dir);
    let answer = tokio::runtime::Runtime::new().unwrap().block_on(get(&state, "/api/v4/services/?postcode=g21al"));
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    assert_eq!(answer.names(), ["Glasgow Only"]);
}

// ---- Search 4: q ----

#[tokio::test]
async fn q_every_word_must_match() {
    assert_eq!(names("postcode=G2+1AL&q=park").await, ["Park Strollers"]);
    assert_eq!(names("postcode=G2+1AL&q=gentle+park").await, ["Park Strollers"]);
    assert!(names("postcode=G2+1AL&q=gentle+foodbank").await.is_empty());
}

#[tokio::test]
async fn q_drops_stop_words() {
    // Search 4: "for" and "the" are not required in the text; the other words still are.
    assert_eq!(names("postcode=G2+1AL&q=park+for+the+walks").await, ["Park Strollers"]);
    assert_eq!(names("postcode=G2+1AL&q=The+Park").await, names("postcode=G2+1AL&q=park").await);
    assert!(names("postcode=G2+1AL&q=gentle+for+foodbank").await.is_empty(), "other words still count");
    // Nothing left but stop words: as if there were no q.
    let everything = names("postcode=G2+1AL&page_size=100").await;
    assert_eq!(names("postcode=G2+1AL&page_size=100&q=to+be+or+not+to+be").await, everything);
    assert_eq!(names("postcode=G2+1AL&page_size=100&q=for%2C+the%21").await, everything);
}

#[tokio::test]
async fn q_is_stemmed() {
    // "walking" and the description's "walks" share the stem "walk".
    assert_eq!(names("postcode=G2+1AL&q=walking").await, ["Park Strollers"]);
    assert_eq!(names("postcode=G2+1AL&q=Walked").await, ["Park Strollers"]);
    // Typos are counted on words, not stems: "walking" (stem "walk") does not match "talk".
    assert!(!names("postcode=G2+1AL&q=walking").await.contains(&"Listening Ear".to_string()));
}

#[tokio::test]
async fn q_allows_one_edit_in_a_word_of_4_to_6_letters() {
    // "Phone" (5 letters) in Scotland Helpline's description.
    assert_eq!(names("postcode=G2+1AL&q=phine").await, ["Scotland Helpline"]);
    assert_eq!(names("postcode=G2+1AL&q=hpone").await, ["Scotland Helpline"], "a swap is one edit");
    assert!(names("postcode=G2+1AL&q=shine").await.is_empty(), "two edits are too many for 5 letters");
}

#[tokio::test]
async fn q_allows_two_edits_in_a_word_of_7_or_more_letters() {
    // "Emergency" (9 letters) in Glasgow Foodbank's description.
    assert_eq!(names("postcode=G2+1AL&q=emargancy").await, ["Glasgow Foodbank"]);
    assert!(names("postcode=G2+1AL&q=imirgincy").await.is_empty(), "three edits");
}

#[tokio::test]
async fn q_words_of_3_letters_or_fewer_match_exactly() {
    // "tea" is in the Edinburgh café's description; "tee" is one edit away.
    assert_eq!(names("postcode=EH1+1AA&q=tea").await, ["Edinburgh Community Cafe"]);
    assert!(names("postcode=EH1+1AA&q=tee").await.is_empty());
    assert!(names("postcode=G2+1AL&q=pak").await.is_empty(), "not \"park\"");
}

#[tokio::test]
async fn q_relevance_weighs_name_description_and_category_names() {
    // Both at L4 (same distance). The Counselling Rooms: name 2 + category name 1;
    // Listening Ear: description 1.5; so The Counselling Rooms first, though its name sorts
    // after.
    assert_eq!(names("postcode=G2+1AL&q=counselling").await, ["The Counselling Rooms", "Listening Ear"]);
    // "therapy": Listening Ear by description 1.5 + category name ("Therapy") 1.
    assert_eq!(names("postcode=G2+1AL&q=therapy").await, ["Listening Ear"]);
    // "club": name matches only, equal relevance: by distance then name.
    assert_eq!(names("postcode=G2+1AL&q=club").await, ["Apple Club", "Southside Zebra Club"]);
}

#[tokio::test]
async fn q_and_category_names_and_folding() {
    // Category names are searched: "Outdoor Pursuits".
    assert_eq!(names("postcode=G2+1AL&q=pursuits").await, ["Park Strollers"]);
    // Punctuation only: no words, no text filter.
    assert_eq!(count("postcode=G2+1AL&q=%21%21").await, count("postcode=G2+1AL").await);
}

// ---- Search 5–6: category and location_type ----

#[tokio::test]
async fn category_includes_every_slug_below_it() {
    for (slug, expected) in [
        ("outdoor-pursuits", vec!["Park Strollers"]),
        ("physical-activity", vec!["Park Strollers", "Apple Club", "Southside Zebra Club"]),
        ("activity", vec!["Park Strollers", "Apple Club", "Southside Zebra Club"]),
        ("health-social-care-services", vec!["Listening Ear", "The Counselling Rooms"]),
        ("counselling", vec!["The Counselling Rooms"]),
    ] {
        assert_eq!(names(&format!("postcode=G2+1AL&category={slug}")).await, expected, "{slug}");
    }
}

#[tokio::test]
async fn several_categories_match_any() {
    assert_eq!(
        names("postcode=G2+1AL&category=foodbank,counselling").await,
        ["The Counselling Rooms", "Glasgow Foodbank"]
    );
    assert_eq!(
        names("postcode=G2+1AL&category=foodbank%2Coutdoor-pursuits%2Cfoodbank").await,
        ["Park Strollers", "Glasgow Foodbank"]
    );
}

#[tokio::test]
async fn location_type_both_ways() {
    assert_eq!(
        names("postcode=G2+1AL&location_type=national&page_size=100").await,
        ["Mobile Library", "Scotland Helpline"]
    );
    let local = names("postcode=G2+1AL&location_type=local&page_size=100").await;
    assert_eq!(local.len(), 10);
    assert!(!local.contains(&"Mobile Library".to_string()) && !local.contains(&"Scotland Helpline".to_string()));
    // A Region area counts as national (it only ever matches where its code is the postcode's).
    assert!(names("postcode=ML1+1AA&location_type=national").await.iter().all(|n| n != "Lanarkshire Money Advice"));
}

// ---- Search 8: paging and links ----
// Links list the parameters in sorted key order, as the described service (Django REST
// framework's replace_query_param / remove_query_param) writes them.

#[tokio::test]
async fn next_and_previous_v4() {
    let state = state_of(&directory());
    let page = |q: &str| get(&state, format!("{V4}?{q}"));
    let first = page("postcode=g2%201al&page_size=5").await.json();
    assert_eq!(first["count"], 12);
    assert_eq!(first["next"], format!("{BASE}/api/v4/services/?page=2&page_size=5&postcode=g2+1al"));
    assert_eq!(first["previous"], json!(null));
    assert_eq!(first["data"].as_array().unwrap().len(), 5);

    let second = page("postcode=g2%201al&page=2&page_size=5").await.json();
    assert_eq!(second["next"], format!("{BASE}/api/v4/services/?page=3&page_size=5&postcode=g2+1al"));
    assert_eq!(second["previous"], format!("{BASE}/api/v4/services/?page_size=5&postcode=g2+1al"));

    let third = page("page=3&postcode=g2%201al&page_size=5&format=json").await.json();
    assert_eq!(third["next"], json!(null));
    assert_eq!(third["previous"], format!("{BASE}/api/v4/services/?format=json&page=2&page_size=5&postcode=g2+1al"));
    assert_eq!(third["data"].as_array().unwrap().len(), 2);

    // The pages together are the whole ordered result.
    let all: Vec<serde_json::Value> =
        [first, second, third].iter().flat_map(|p| p["data"].as_array().unwrap().clone()).collect();
    let whole = page("postcode=g2%201al&page_size=100").await.json();
    assert_eq!(&all, whole["data"].as_array().unwrap());
}

#[tokio::test]
async fn page_last_is_the_last_page() {
    let state = state_of(&directory());
    let page = |q: &str| get(&state, format!("{V4}?{q}"));
    // 12 results in pages of 5: the last page is page 3, links and all.
    let last = page("postcode=g2%201al&page_size=5&page=last").await.json();
    let third = page("postcode=g2%201al&page_size=5&page=3").await.json();
    assert_eq!(last["data"], third["data"]);
    assert_eq!(last["next"], json!(null));
    assert_eq!(last["previous"], format!("{BASE}/api/v4/services/?page=2&page_size=5&postcode=g2+1al"));
    // The last value of page counts, as for numbers; "last" is one spelling only.
    assert_eq!(
        page("postcode=G2+1AL&page=2&page=last").await.json()["data"],
        page("postcode=G2+1AL&page=2").await.json()["data"]
    );
    for other in ["LAST", "last%20", "lastly"] {
        assert_eq!(page(&format!("postcode=G2+1AL&page={other}")).await.status, 404, "{other}");
    }
    // An empty result: page=last is its page 1.
    let empty = page("postcode=ZE1+0AA&radius=0&page=last").await;
    assert_eq!(empty.status, 200);
    assert_eq!(empty.json()["count"], 0);
    // v3 too (pages of 10).
    let v3 = get(&state, "/api/v3/search/?postcode=G2+1AL&page=last").await.json();
    assert_eq!(v3["previous"], format!("{BASE}/api/v3/search/?postcode=G2+1AL"));
    assert_eq!(v3["results"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn next_and_previous_v3() {
    let state = state_of(&directory());
    // v3 has no page_size: pages of 10, and page_size is repeated but ignored.
    let first = get(&state, "/api/v3/search?postcode=G2+1AL&page_size=2").await;
    assert_eq!(first.status, 200);
    let first = first.json();
    assert_eq!(first["count"], 12);
    assert_eq!(first["results"].as_array().unwrap().len(), 10);
    assert_eq!(first["next"], format!("{BASE}/api/v3/search/?page=2&page_size=2&postcode=G2+1AL"));
    assert_eq!(first["previous"], json!(null));
    let second = get(&state, "/api/v3/search/?postcode=G2+1AL&page=2").await.json();
    assert_eq!(second["results"].as_array().unwrap().len(), 2);
    assert_eq!(second["next"], json!(null));
    assert_eq!(second["previous"], format!("{BASE}/api/v3/search/?postcode=G2+1AL"));
    assert!(first.get("meta").is_none(), "v3 has no meta");
}

#[tokio::test]
async fn page_size_above_100_is_taken_as_100() {
    let many: Vec<ServiceSpec> = (0..150).map(|_| ("Many", "Same place.", &[][..], &[][..], &[0usize][..])).collect();
    let state = state_of(&directory_of(&many));
    let answer = get(&state, &format!("{V4}?postcode=G2+1AL&page_size=1000")).await.json();
    assert_eq!(answer["count"], 150);
    assert_eq!(answer["data"].as_array().unwrap().len(), 100);
    assert_eq!(answer["next"], format!("{BASE}/api/v4/services/?page=2&page_size=1000&postcode=G2+1AL"));
    let second = get(&state, &format!("{V4}?postcode=G2+1AL&page_size=1000&page=2")).await.json();
    assert_eq!(second["data"].as_array().unwrap().len(), 50);
    // Invalid sizes fall back to 10.
    for size in ["0", "-1", "ten"] {
        let answer = get(&state, &format!("{V4}?postcode=G2+1AL&page_size={size}")).await.json();
        assert_eq!(answer["data"].as_array().unwrap().len(), 10, "{size}");
    }
}

#[tokio::test]
async fn base_url_override_is_used_for_links() {
    let dir = directory();
    let state = std::sync::Arc::new(
        svcdir::server::AppState::new(svcdir::index::SearchIndex::build(&dir, &publication()))
            .with_base_url("http://127.0.0.1:9999".into()),
    );
    let answer =
        send(&state, Method::GET, "/api/v4/services?postcode=G2+1AL&page_size=1", &[("host", "evil.example")]).await;
    assert_eq!(answer.json()["next"], "http://127.0.0.1:9999/api/v4/services/?page=2&page_size=1&postcode=G2+1AL");
}

// ---- the response body ----

#[tokio::test]
async fn v4_body_is_the_static_builds_list_shape() {
    let state = state_of(&directory());
    let json = get(&state, &format!("{V4}?postcode=G2+1AL&q=walks")).await.json();
    assert_eq!(json["meta"]["licence"], "https://creativecommons.org/licenses/by/4.0/");
    assert_eq!(json["meta"]["attribution"].as_array().unwrap().len(), 4);
    let service = &json["data"][0];
    assert_eq!(service["name"], "Park Strollers");
    assert_eq!(service["last_updated"], "2024-03-09T16:00:00.123457+00:00");
    assert_eq!(service["categories"], json!([{"name": "Outdoor Pursuits", "slug": "outdoor-pursuits"}]));
    assert_eq!(service["directory_url"], "https://www.example.org/services/park-strollers-2/");
    assert_eq!(service["locations"][0]["latitude"], 55.87);
    assert_eq!(service["organisation"]["name"], "Scotland Support");

    let v3 = get(&state, "/api/v3/search/?postcode=G2+1AL&q=library").await.json();
    let service = &v3["results"][0];
    assert_eq!(service["service_areas"][0], json!({"code": "S12000046", "type": "2", "name": "Glasgow City"}));
    assert!(service.get("slug").is_none());
}

// ---- Errors ----

async fn error(query: &str) -> (u16, serde_json::Value) {
    let state = state_of(&directory());
    let answer = get(&state, &format!("{V4}?{query}")).await;
    assert_eq!(answer.header("content-type"), "application/json");
    (answer.status.as_u16(), answer.json())
}

#[tokio::test]
async fn every_error_of_behaviour_md() {
    for (query, status, body) in [
        ("", 400, json!({"postcode": ["This field is required."]})),
        ("q=food", 400, json!({"postcode": ["This field is required."]})),
        ("postcode=xx11xx", 400, json!({"postcode": ["Object with postcode=XX1 1XX does not exist."]})),
        ("postcode=XX1+1XX", 400, json!({"postcode": ["Object with postcode=XX1 1XX does not exist."]})),
        // Districts and sectors with no live postcode, named in their normalised form.
        ("postcode=ab99+++9", 400, json!({"postcode": ["Object with postcode=AB99 9 does not exist."]})),
        ("postcode=%20ab99", 400, json!({"postcode": ["Object with postcode=AB99 does not exist."]})),
        ("postcode=G2+1AL&category=nope", 400, json!({"category": ["Object with slug=nope does not exist."]})),
        ("postcode=G2+1AL&location_type=far", 400, json!({"location_type": ["\"far\" is not a valid choice."]})),
        ("postcode=G2+1AL&radius=far", 400, json!({"radius": ["A valid integer is required."]})),
        ("postcode=G2+1AL&radius=-1", 400, json!({"radius": ["Ensure this value is greater than or equal to 0."]})),
        (
            "radius=x&category=money,nope&location_type=far",
            400,
            json!({
                "postcode": ["This field is required."],
                "category": ["Object with slug=nope does not exist."],
                "location_type": ["\"far\" is not a valid choice."],
                "radius": ["A valid integer is required."],
            }),
        ),
        ("postcode=G2+1AL&page=0", 404, json!({"detail": "Invalid page."})),
        ("postcode=G2+1AL&page=3", 404, json!({"detail": "Invalid page."})),
        ("postcode=G2+1AL&page=two", 404, json!({"detail": "Invalid page."})),
        ("postcode=G2+1AL&page=99999999999999999999999", 404, json!({"detail": "Invalid page."})),
        ("postcode=G2+1AL&format=xml", 404, json!({"detail": "Not found."})),
        // Parameters are checked before the page.
        ("postcode=nope!&page=0", 400, json!({"postcode": ["Object with postcode=nope! does not exist."]})),
    ] {
        assert_eq!(error(query).await, (status, body), "{query}");
    }
}

#[tokio::test]
async fn page_1_of_an_empty_result_is_valid() {
    let (status, body) = error("postcode=G2+1AL&q=xylophone").await;
    assert_eq!(status, 200);
    assert_eq!(body["count"], 0);
    assert_eq!(error("postcode=G2+1AL&q=xylophone&page=2").await.0, 404);
}

#[tokio::test]
async fn unknown_paths_are_404_not_found() {
    let state = state_of(&directory());
    for path in
        ["/", "/api/v4/services/x/", "/api/v4/search/", "/api/v3/search//", "/api/v4/categories/?postcode=G2+1AL"]
    {
        let answer = get(&state, path).await;
        assert_eq!(answer.status, 404, "{path}");
        assert_eq!(answer.json(), json!({"detail": "Not found."}), "{path}");
        assert_eq!(answer.header("allow"), "GET, HEAD, OPTIONS");
    }
}

// ---- postcode spellings ----

#[tokio::test]
async fn every_spelling_of_the_postcode_finds_the_same_services() {
    let expected = names("postcode=G2+1AL").await;
    for spelling in ["g21al", "G2%201AL", "g2+1al", "%20g2%201al%20", "G2++1AL", "g2%2B1al"] {
        assert_eq!(names(&format!("postcode={spelling}")).await, expected, "{spelling}");
    }
}

// ---- Routing: paths, methods, headers ----

fn assert_common_headers(answer: &Answer, content_type: &str) {
    assert_eq!(answer.header("allow"), "GET, HEAD, OPTIONS");
    assert_eq!(answer.header("vary"), "Accept");
    assert_eq!(answer.header("access-control-allow-origin"), "*");
    assert_eq!(answer.header("content-type"), content_type);
}

#[tokio::test]
async fn both_paths_with_and_without_slash() {
    let state = state_of(&directory());
    for path in ["/api/v4/services/", "/api/v4/services", "/api/v3/search/", "/api/v3/search"] {
        let answer = get(&state, &format!("{path}?postcode=G2+1AL")).await;
        assert_eq!(answer.status, 200, "{path}");
        assert_common_headers(&answer, "application/json");
        assert_eq!(answer.json()["count"], 12);
    }
}

#[tokio::test]
async fn head_is_get_without_a_body() {
    let state = state_of(&directory());
    let uri = format!("{V4}?postcode=G2+1AL");
    let head = send(&state, Method::HEAD, &uri, &[]).await;
    assert_eq!(head.status, 200);
    assert_common_headers(&head, "application/json");
    assert!(head.body.is_empty());
    let bad = send(&state, Method::HEAD, V4, &[]).await;
    assert_eq!(bad.status, 400);
    assert!(bad.body.is_empty());
}

#[tokio::test]
async fn options_is_200_with_the_headers_and_no_body() {
    let state = state_of(&directory());
    for path in ["/api/v4/services/", "/api/v3/search"] {
        let answer = send(&state, Method::OPTIONS, path, &[]).await;
        assert_eq!(answer.status, 200);
        assert_common_headers(&answer, "application/json");
        assert!(answer.body.is_empty());
    }
}

#[tokio::test]
async fn other_methods_are_405_with_allow() {
    let state = state_of(&directory());
    for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
        let answer = send(&state, method.clone(), &format!("{V4}?postcode=G2+1AL"), &[]).await;
        assert_eq!(answer.status, 405, "{method}");
        assert_common_headers(&answer, "application/json");
        assert_eq!(answer.json(), json!({"detail": format!("Method \"{method}\" not allowed.")}));
    }
}

// ---- JSON or HTML ----

#[tokio::test]
async fn format_and_accept_choose_json_or_html() {
    let state = state_of(&directory());
    let browser = [("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")];
    let html = "text/html; charset=utf-8";

    let answer = get(&state, &format!("{V4}?postcode=G2+1AL&format=api")).await;
    assert_eq!(answer.status, 200);
    assert_common_headers(&answer, html);
    let page = String::from_utf8(answer.body).unwrap();
    assert!(page.contains("Park Strollers"));
    assert!(page.contains("format=json"), "links to the JSON form");

    let answer = send(&state, Method::GET, &format!("{V4}?postcode=G2+1AL"), &browser).await;
    assert_common_headers(&answer, html);
    let answer = send(&state, Method::GET, &format!("{V4}?postcode=G2+1AL&format=json"), &browser).await;
    assert_common_headers(&answer, "application/json");
    for accept in ["*/*", "application/json", "application/json, text/html"] {
        let answer = send(&state, Method::GET, &format!("{V4}?postcode=G2+1AL"), &[("accept", accept)]).await;
        assert_common_headers(&answer, "application/json");
    }
    let answer = send(&state, Method::GET, &format!("{V4}?postcode=G2+1AL&format=yaml"), &browser).await;
    assert_eq!(answer.status, 404);
    assert_eq!(answer.json(), json!({"detail": "Not found."}));
}

#[tokio::test]
async fn errors_get_the_html_view_when_html_is_negotiated() {
    let state = state_of(&directory());
    let browser = [("accept", "text/html")];
    let answer = send(&state, Method::GET, &format!("{V4}?postcode=%3Cb%3Enope"), &browser).await;
    assert_eq!(answer.status, 400);
    assert_common_headers(&answer, "text/html; charset=utf-8");
    let page = String::from_utf8(answer.body).unwrap();
    assert!(page.contains("does not exist"));
    assert!(!page.contains("<b>nope"), "escaped");
    let answer = send(&state, Method::GET, "/nowhere", &browser).await;
    assert_eq!(answer.status, 404);
    assert_common_headers(&answer, "text/html; charset=utf-8");
    let answer = get(&state, &format!("{V4}?postcode=G2+1AL&page=7&format=api")).await;
    assert_eq!(answer.status, 404);
    assert!(String::from_utf8(answer.body).unwrap().contains("Invalid page."));
}

// ---- robustness ----

#[tokio::test]
async fn a_panic_becomes_a_500_json_body() {
    use axum::routing::get as route_get;
    let router = svcdir::server::layered(axum::Router::new().route(
        "/boom",
        route_get(|| async {
            if true {
                panic!("deliberate");
            }
            ""
        }),
    ));
    let response = tower::ServiceExt::oneshot(
        router,
        axum::http::Request::builder().uri("/boom").body(axum::body::Body::empty()).unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["allow"], "GET, HEAD, OPTIONS");
    let body = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
        json!({"detail": "A server error occurred."})
    );
}

#[tokio::test]
async fn hostile_queries_never_fail_the_server() {
    let state = state_of(&directory());
    for query in [
        "postcode=%FF%FE",
        "postcode=G2+1AL&q=%00%01",
        "postcode=G2+1AL&q=",
        "postcode=G2+1AL&radius=18446744073709551615",
        "postcode=G2+1AL&radius=99999999999999999999999999",
        "postcode=G2+1AL&page_size=18446744073709551616&page=18446744073709551615",
        "postcode=G2+1AL&category=,,,",
        "postcode=G2+1AL&q=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "%%%%&&&===",
        "postcode",
        "postcode=G2+1AL&postcode=",
    ] {
        let answer = get(&state, &format!("{V4}?{query}")).await;
        assert!([200, 400, 404].contains(&answer.status.as_u16()), "{query}: {}", answer.status);
        answer.json();
    }
}

// ---- Any query string (issue 6): the proptest twin of fuzz/fuzz_targets/search_query.rs ----

mod any_query {
    use super::*;
    use proptest::prelude::*;

    /// Bytes a URI query may hold as they are; every other byte percent-encoded. `%` stays
    /// raw, so broken escapes (`%zz`, `%f`) reach the parser too.
    fn as_query(bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len() * 3);
        for &byte in bytes {
            if byte.is_ascii_alphanumeric() || b"%&=+-._~,:;!*'()/?@$".contains(&byte) {
                out.push(byte as char);
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
        out
    }

    /// A value that is sometimes valid for its parameter (so that searches run to their end),
    /// sometimes anything at all.
    fn value(key: &'static str) -> BoxedStrategy<String> {
        let valid: Vec<&'static str> = match key {
            "postcode" => vec!["G2+1AL", "g21al", "G2%201AL", "EH1+1YZ", "ZZ99+9ZZ"],
            "q" => vec!["food", "foodbank+cafe", "counseling", "walk", "%E2%80%AE"],
            "radius" => vec!["1", "5000", "999999999999999999999", "-1", "1e3"],
            "category" => vec!["foodbank", "activity,money", "counselling,", ",", "unknown"],
            "location_type" => vec!["local", "national", "LOCAL", ""],
            "page" | "page_size" => vec!["1", "2", "0", "100", "101", "18446744073709551616", "x"],
            _ => vec!["api", "json", "html", "xml"],
        };
        prop_oneof![
            3 => proptest::sample::select(valid).prop_map(str::to_owned),
            1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(|b| as_query(&b)),
        ]
        .boxed()
    }

    fn structured() -> impl Strategy<Value = String> {
        let keys = ["postcode", "q", "radius", "category", "location_type", "page", "page_size", "format"];
        proptest::collection::vec(proptest::sample::select(keys.to_vec()).prop_flat_map(|k| (Just(k), value(k))), 0..7)
            .prop_map(|pairs| pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&"))
    }

    fn check(state: &std::sync::Arc<svcdir::server::AppState>, runtime: &tokio::runtime::Runtime, query: &str) {
        for path in ["/api/v4/services/", "/api/v3/search/"] {
            let uri = format!("{path}?{query}");
            let answer = runtime.block_on(get(state, uri.as_str()));
            let status = answer.status.as_u16();
            assert!(matches!(status, 200 | 400 | 404), "{uri}: {status} {}", String::from_utf8_lossy(&answer.body));
            match answer.header("content-type") {
                "application/json" => {
                    let json = answer.json();
                    if status == 200 {
                        assert!(json["count"].is_u64(), "{uri}: {json}");
                    }
                }
                "text/html; charset=utf-8" => {
                    let html = String::from_utf8(answer.body.clone()).expect("UTF-8 HTML");
                    assert!(html.starts_with("<!doctype html>") && html.trim_end().ends_with("</html>"), "{uri}");
                }
                other => panic!("{uri}: content type {other:?}"),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Any bytes: an answer of the API's (a page, 400 or 404, JSON or its HTML view),
        /// never a 500 (what a panic or a failed render becomes).
        #[test]
        fn any_bytes_as_the_query_get_an_api_answer(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            thread_local! {
                static FIXTURE: (std::sync::Arc<svcdir::server::AppState>, tokio::runtime::Runtime) = (
                    state_of(&directory()),
                    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"),
                );
            }
            FIXTURE.with(|(state, runtime)| check(state, runtime, &as_query(&bytes)));
        }

        /// Known parameters with valid and hostile values, in any order and number: searches
        /// that run to the end, filters, pages past the end, both versions, both formats.
        #[test]
        fn any_mix_of_parameters_gets_an_api_answer(query in structured()) {
            thread_local! {
                static FIXTURE: (std::sync::Arc<svcdir::server::AppState>, tokio::runtime::Runtime) = (
                    state_of(&directory()),
                    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"),
                );
            }
            FIXTURE.with(|(state, runtime)| check(state, runtime, &query));
        }
    }
}
