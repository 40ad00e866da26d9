//! End-to-end tests over HTTP: the deployment as users meet it.
//!
//! One list of tests (`cases`) runs against three deployments of the same build of
//! `tests/fixtures/small` (made by the real `svcdir build`, import pages of 2):
//!
//! - `nginx::*`: real nginx started with the configuration printed by `svcdir nginx-config`
//!   (`nginx -p <tmp> -c <tmp>/nginx.conf -g 'daemon off;'`), proxying search to a real
//!   `svcdir-search`. When nginx is not installed these say "skipped" and pass; `.ci/run`
//!   installs it.
//! - `preview::*`: `svcdir serve`.
//! - `worker::*`: the Cloudflare Worker of `svcdir cdn-config cloudflare` in workerd (npm
//!   `workerd`), its static origin a public-read bucket of a local S3 server (moto) filled
//!   by `svcdir publish`, its search origin svcdir-search. Skipped, saying so, without them.
//!
//! Both must give the answers of `svcdir::api::routing::route`, which is how the suite shows the
//! nginx template and the preview agree. `nginx_only` checks what only nginx has (its own
//! config test, an unreachable search server); `rebuild` that a new build is served without
//! a reload and its search index after SIGHUP; `deploy` the systemd units
//! and the container image of `deploy/`; `browser` opens the HTML views in headless Chromium. Processes run on free loopback ports and are stopped when the tests let go.
// A test crate's modules share items as `pub`; the lint is for the library's API (Cargo.toml).
#![allow(unreachable_pub)]

mod browser;
mod cases;
mod deploy;
mod etag;
mod hostile;
mod nginx_only;
mod rebuild;
mod replicas;
mod support;

/// Declares each case once per deployment.
macro_rules! against_both {
    ($($case:ident),* $(,)?) => {
        /// The cases against nginx with the generated configuration, plus svcdir-search.
        mod nginx {
            $(
                #[test]
                fn $case() {
                    if let Some(deployment) = crate::support::nginx() {
                        crate::cases::$case(&deployment);
                    }
                }
            )*
        }

        /// The cases against the Cloudflare Worker in workerd, its static origin a public-read
        /// bucket filled by `svcdir publish`, plus svcdir-search.
        mod worker {
            $(
                #[test]
                fn $case() {
                    if let Some(deployment) = crate::support::worker() {
                        crate::cases::$case(&deployment);
                    }
                }
            )*
        }

        /// The cases against `svcdir serve`.
        mod preview {
            $(
                #[test]
                fn $case() {
                    crate::cases::$case(&crate::support::preview());
                }
            )*
        }
    };
}

against_both!(
    static_endpoints_answer_with_and_without_slash,
    resources_by_id_and_by_slug_are_identical,
    categories_and_service_areas_in_v4_and_v3,
    import_next_links_lead_through_every_page,
    import_invalid_pages_are_404,
    search_answers_in_v4_and_v3,
    format_and_accept_choose_json_or_html,
    encoded_parameter_names_are_decoded,
    accept_headers_agree_with_prefers_html,
    every_kind_of_response_has_the_api_headers,
    head_is_get_without_body,
    options_is_200_with_headers_and_no_body,
    cors_preflight_is_answered,
    import_page_last_is_the_last_page,
    search_drops_stop_words,
    search_answers_are_cached_as_sent_and_formats_kept_apart,
    repeated_searches_do_not_reach_the_origin,
    other_methods_are_405,
    unknown_paths_ids_and_slugs_are_404,
    operator_paths_are_not_served,
    internal_folders_are_not_reachable,
    nothing_outside_public_is_served,
    json_and_html_are_gzipped,
    answers_agree_with_the_routing_rules,
    openapi_document_and_page_are_served,
    open_referral_lists_and_objects_are_served,
    downloads_are_served_as_they_are,
    change_record_is_served,
    api_root_answers_at_slash_and_api,
    search_html_views_carry_the_form,
    listings_are_paged_as_the_import,
);
