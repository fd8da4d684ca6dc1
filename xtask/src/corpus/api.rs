//! Generic API payloads: the JSON that ordinary tools (issue trackers, shops, HR systems,
//! log stores, analytics, file systems, search engines) return to an agent.

use serde_json::{json, Map, Value};

use super::gen::{
    ascii_lower, date, obj, obj_opt, person, sentence, timestamp, timestamp_millis, Rng, EPOCH,
};
use super::Entry;

pub(crate) fn entries() -> Vec<Entry> {
    vec![
        issues(),
        orders(),
        employees(),
        event_logs(),
        analytics(),
        directory_listing(),
        knowledge_graph(),
        nested_config(),
        feature_flags(),
        search_results(),
        repositories(),
        contacts(),
        pods(),
        sql_rows(),
    ]
}

fn issues() -> Entry {
    let mut rng = Rng::new(0xA91_0001);
    const LABELS: &[&str] = &[
        "bug",
        "enhancement",
        "good first issue",
        "needs-triage",
        "area/api",
        "area/ui",
        "priority: high",
        "priority: low",
        "regression",
        "docs",
    ];
    const TITLES: &[&str] = &[
        "Checkout fails with 502 when the cart has more than 50 items",
        "Add `--dry-run` flag to the migrate command",
        "Pagination cursor skips rows after a deploy",
        "Dark mode: contrast of disabled buttons is too low",
        "Webhook retries ignore the Retry-After header",
        "Support SSO via SAML for enterprise workspaces",
        "Search returns stale results for 5 minutes after an update",
        "Document the rate limits of the public API",
        "Crash on startup when config.yaml has a BOM",
        "Refund emails show the amount in cents, e.g. \"1999 USD\"",
        "Timezone offset is wrong for Australia/Lord_Howe",
        "Export to CSV quotes numbers as strings",
    ];
    let items: Vec<Value> = (0..24)
        .map(|i| {
            let (_, login) = person(&mut rng);
            let state = if rng.chance(70) { "open" } else { "closed" };
            let created = EPOCH - 86_400 * rng.range(1, 90) as i64 - rng.below(86_400) as i64;
            let updated = created + rng.range(600, 86_400 * 5) as i64;
            let labels: Vec<Value> = rng
                .sample_between(LABELS, 0, 3)
                .into_iter()
                .map(|l| json!(l))
                .collect();
            let assignee = if rng.chance(60) {
                json!({"login": person(&mut rng).1})
            } else {
                Value::Null
            };
            let body = (0..rng.range(1, 3))
                .map(|_| {
                    let n = rng.range(8, 20) as usize;
                    sentence(&mut rng, n)
                })
                .collect::<Vec<_>>()
                .join(" ");
            obj([
                ("number", json!(4821 - i * 3 - rng.below(3))),
                ("title", json!(rng.pick(TITLES))),
                ("state", json!(state)),
                ("user", json!({"login": login})),
                ("assignee", assignee),
                ("labels", Value::Array(labels)),
                ("comments", json!(rng.below(14))),
                ("created_at", json!(timestamp(created))),
                ("updated_at", json!(timestamp(updated))),
                ("body", json!(body)),
            ])
        })
        .collect();
    Entry::generic(
        "issues",
        "list_issues",
        "an issue tracker's list: titles with quotes and backticks, label arrays, null assignees, prose bodies",
        json!({"total_count": 312, "incomplete_results": false, "items": items}),
    )
}

fn orders() -> Entry {
    let mut rng = Rng::new(0xA91_0002);
    const PRODUCTS: &[(&str, &str, f64)] = &[
        ("SKU-WM01", "Wireless Mouse", 29.99),
        ("SKU-UC02", "USB-C Cable, 2 m", 14.99),
        ("SKU-MK04", "Mechanical Keyboard", 89.99),
        ("SKU-HD07", "27\" Monitor", 249.5),
        ("SKU-LS11", "Laptop Stand", 39.5),
        ("SKU-WC13", "Webcam 1080p", 59.99),
        ("SKU-HS21", "Noise-cancelling Headset", 129.0),
    ];
    const STATUS: &[&str] = &["pending", "paid", "shipped", "delivered", "refunded"];
    const TIERS: &[&str] = &["standard", "premium", "enterprise"];
    let orders: Vec<Value> = (0..30)
        .map(|i| {
            let (name, login) = person(&mut rng);
            let items: Vec<Value> = (0..rng.range(1, 4))
                .map(|_| {
                    let (sku, product, price) = *rng.pick(PRODUCTS);
                    json!({"sku": sku, "name": product, "quantity": rng.range(1, 3), "unitPrice": price})
                })
                .collect();
            let cents: u64 = items
                .iter()
                .map(|it| {
                    let price = it["unitPrice"].as_f64().unwrap_or(0.0);
                    (price * 100.0).round() as u64 * it["quantity"].as_u64().unwrap_or(0)
                })
                .sum();
            let tax = cents * 8 / 100;
            let money = |c: u64| json!(c as f64 / 100.0);
            obj([
                ("orderId", json!(format!("ORD-{:06}", 104_233 + i * 7))),
                (
                    "customer",
                    obj([
                        ("id", json!(rng.range(1000, 9999))),
                        ("name", json!(name)),
                        ("email", json!(format!("{login}@example.com"))),
                        ("tier", json!(rng.pick(TIERS))),
                    ]),
                ),
                ("items", Value::Array(items)),
                ("subtotal", money(cents)),
                ("tax", money(tax)),
                ("total", money(cents + tax)),
                ("currency", json!("USD")),
                ("status", json!(rng.pick(STATUS))),
                ("createdAt", json!(timestamp(EPOCH - rng.below(86_400 * 30) as i64))),
            ])
        })
        .collect();
    Entry::generic(
        "orders",
        "list_orders",
        "e-commerce orders with a nested customer and one to four line items each",
        json!({"orders": orders, "page": 1, "pageSize": 30, "hasMore": true}),
    )
}

fn employees() -> Entry {
    let mut rng = Rng::new(0xA91_0003);
    const DEPARTMENTS: &[(&str, &[&str])] = &[
        (
            "Engineering",
            &[
                "Software Engineer",
                "Senior Software Engineer",
                "Staff Engineer",
                "Engineering Manager",
            ],
        ),
        (
            "Sales",
            &["Account Executive", "Sales Engineer", "Sales Director"],
        ),
        (
            "Marketing",
            &["Content Strategist", "Growth Marketer", "Marketing Manager"],
        ),
        ("Support", &["Support Specialist", "Support Lead"]),
        (
            "Finance",
            &["Accountant", "Financial Analyst", "Controller"],
        ),
    ];
    let rows: Vec<Value> = (0..80)
        .map(|i| {
            let (name, login) = person(&mut rng);
            let (department, titles) = *rng.pick(DEPARTMENTS);
            obj([
                ("id", json!(1001 + i)),
                ("name", json!(name)),
                ("email", json!(format!("{login}{i}@acme.example"))),
                ("department", json!(department)),
                ("title", json!(rng.pick(titles))),
                ("salary", json!(rng.range(48, 210) * 1000)),
                ("hireDate", json!(date(16_000 + rng.below(4000) as i64))),
                ("active", json!(rng.chance(92))),
            ])
        })
        .collect();
    Entry::generic(
        "employees",
        "list_employees",
        "uniform employee records: the flat, tabular case",
        json!({ "employees": rows }),
    )
}

fn event_logs() -> Entry {
    let mut rng = Rng::new(0xA91_0004);
    const SERVICES: &[&str] = &[
        "api-gateway",
        "orders",
        "billing",
        "auth",
        "search",
        "worker",
    ];
    const ENDPOINTS: &[&str] = &[
        "/v1/orders",
        "/v1/orders/{id}",
        "/v1/cart/items",
        "/v1/login",
        "/v1/search",
        "/healthz",
    ];
    let mut t = (EPOCH + 9 * 3600) * 1000;
    let events: Vec<Value> = (0..60)
        .map(|_| {
            t += rng.range(40, 9000) as i64;
            let service = rng.pick(SERVICES);
            let level = match rng.below(100) {
                0..=64 => "info",
                65..=84 => "debug",
                85..=94 => "warn",
                _ => "error",
            };
            let status = match level {
                "error" => *rng.pick(&[500u64, 502, 503, 504]),
                "warn" => *rng.pick(&[400u64, 401, 404, 409, 429]),
                _ => *rng.pick(&[200u64, 200, 200, 201, 204]),
            };
            let error = (level == "error").then(|| {
                let (code, message) = *rng.pick(&[
                    ("UPSTREAM_TIMEOUT", "upstream billing did not answer within 3000 ms"),
                    ("DB_CONN_RESET", "connection reset by peer: pgbouncer:6432"),
                    ("PANIC", "runtime error: index out of range [3] with length 3"),
                ]);
                obj_opt([
                    ("code", Some(json!(code))),
                    ("message", Some(json!(message))),
                    (
                        "stack",
                        (code == "PANIC").then(|| json!("goroutine 812 [running]:\nmain.(*Handler).serve(0xc0001a2000)\n\t/src/internal/httpapi/orders.go:88 +0x1d5")),
                    ),
                ])
            });
            obj_opt([
                ("timestamp", Some(json!(timestamp_millis(t)))),
                ("level", Some(json!(level))),
                ("service", Some(json!(service))),
                ("message", Some(json!(match level {
                    "error" => "request failed",
                    "warn" => "client error",
                    "debug" => "cache lookup",
                    _ => "request served",
                }))),
                ("requestId", rng.chance(85).then(|| json!(format!("req_{}", rng.hex(12))))),
                ("method", (level != "debug").then(|| json!(rng.pick(&["GET", "GET", "POST", "DELETE"])))),
                ("path", (level != "debug").then(|| json!(rng.pick(ENDPOINTS)))),
                ("status", (level != "debug").then(|| json!(status))),
                ("durationMs", (level != "debug").then(|| json!(rng.range(2, 900)))),
                ("userId", rng.chance(50).then(|| json!(rng.range(10_000, 99_999)))),
                ("cacheHit", (level == "debug").then(|| json!(rng.chance(70)))),
                ("error", error),
            ])
        })
        .collect();
    Entry::generic(
        "event_logs",
        "query_logs",
        "semi-uniform log events: optional fields, a nested error object on failures, a stack trace",
        json!({"query": "service:* level>=debug", "events": events}),
    )
}

fn analytics() -> Entry {
    let mut rng = Rng::new(0xA91_0005);
    let first_day = EPOCH / 86_400 - 60;
    let series: Vec<Value> = (0..60)
        .map(|d| {
            let weekend = (first_day + d + 4) % 7 >= 5;
            let views = rng.range(4000, 9000) / if weekend { 2 } else { 1 };
            let clicks = views * rng.range(8, 14) / 100;
            let conversions = clicks * rng.range(2, 7) / 100;
            let revenue_cents = conversions * rng.range(3500, 9000);
            obj([
                ("date", json!(date(first_day + d))),
                ("views", json!(views)),
                ("clicks", json!(clicks)),
                ("conversions", json!(conversions)),
                ("revenue", json!(revenue_cents as f64 / 100.0)),
                ("bounceRate", json!(rng.decimal(0.28, 0.61, 3))),
            ])
        })
        .collect();
    Entry::generic(
        "analytics",
        "get_metrics",
        "a daily analytics time series: dates, counts, money and rates over 60 days",
        json!({
            "metric": "storefront.daily",
            "from": date(first_day),
            "to": date(first_day + 59),
            "timezone": "UTC",
            "series": series,
        }),
    )
}

fn directory_listing() -> Entry {
    let mut rng = Rng::new(0xA91_0006);
    const NAMES: &[(&str, &str)] = &[
        (".github", "dir"),
        (".gitignore", "file"),
        ("Cargo.lock", "file"),
        ("Cargo.toml", "file"),
        ("LICENSE-APACHE", "file"),
        ("LICENSE-MIT", "file"),
        ("README.md", "file"),
        ("benches", "dir"),
        ("build.rs", "file"),
        ("docs", "dir"),
        ("examples", "dir"),
        ("fuzz", "dir"),
        ("rustfmt.toml", "file"),
        ("src", "dir"),
        ("target", "dir"),
        ("tests", "dir"),
        ("CHANGELOG.md", "file"),
        ("deny.toml", "file"),
        ("latest.log", "symlink"),
        ("notes for release v2.1.md", "file"),
        ("scripts", "dir"),
        ("data.sqlite", "file"),
        ("data.sqlite-wal", "file"),
        (".env.example", "file"),
        ("Makefile", "file"),
        ("flake.nix", "file"),
    ];
    let entries: Vec<Value> = NAMES
        .iter()
        .map(|&(name, kind)| {
            let modified = EPOCH - rng.below(86_400 * 200) as i64;
            obj_opt([
                ("name", Some(json!(name))),
                ("type", Some(json!(kind))),
                (
                    "size",
                    Some(json!(match kind {
                        "dir" => 4096,
                        "symlink" => name.len() as u64 + 9,
                        _ => rng.range(80, 250_000),
                    })),
                ),
                (
                    "mode",
                    Some(json!(match kind {
                        "dir" => "drwxr-xr-x",
                        "symlink" => "lrwxrwxrwx",
                        _ if name.ends_with(".sh") || name == "build.rs" => "-rwxr-xr-x",
                        _ => "-rw-r--r--",
                    })),
                ),
                ("modified", Some(json!(timestamp(modified)))),
                (
                    "target",
                    (kind == "symlink").then(|| json!("logs/2025-06-01.log")),
                ),
            ])
        })
        .collect();
    Entry::generic(
        "directory_listing",
        "list_directory",
        "a directory listing: files, folders and a symlink, names with spaces and dots",
        json!({"path": "/home/dev/projects/agentwire", "entries": entries, "truncated": false}),
    )
}

fn knowledge_graph() -> Entry {
    let mut rng = Rng::new(0xA91_0007);
    let people: Vec<(String, String)> = (0..8).map(|_| person(&mut rng)).collect();
    let orgs = ["Acme Corp", "Globex", "Initech", "Umbrella Health"];
    let projects = [
        "Project Atlas",
        "Checkout v2",
        "Data Lake Migration",
        "SOC 2 Audit",
    ];
    let places = ["Berlin", "São Paulo", "Nairobi", "Seoul"];
    let mut entities = Vec::new();
    for (i, (name, login)) in people.iter().enumerate() {
        entities.push(obj([
            ("id", json!(format!("person:{login}"))),
            ("type", json!("Person")),
            ("name", json!(name)),
            (
                "properties",
                obj_opt([
                    (
                        "role",
                        Some(json!(
                            ["CTO", "Engineer", "Designer", "PM", "Analyst"][i % 5]
                        )),
                    ),
                    ("since", Some(json!(2015 + rng.below(10)))),
                    (
                        "email",
                        rng.chance(60)
                            .then(|| json!(format!("{login}@example.org"))),
                    ),
                ]),
            ),
        ]));
    }
    for (i, org) in orgs.iter().enumerate() {
        entities.push(obj([
            ("id", json!(format!("org:{}", ascii_lower(org)))),
            ("type", json!("Organization")),
            ("name", json!(org)),
            (
                "properties",
                {
                    let industry = ["manufacturing", "energy", "software", "healthcare"][i];
                    json!({"industry": industry, "employees": rng.range(40, 90_000), "public": rng.chance(50)})
                },
            ),
        ]));
    }
    for project in projects {
        entities.push(obj([
            ("id", json!(format!("project:{}", ascii_lower(project)))),
            ("type", json!("Project")),
            ("name", json!(project)),
            ("properties", json!({"status": rng.pick(&["active", "planned", "done"]), "budget": rng.range(5, 500) * 1000})),
        ]));
    }
    for place in places {
        entities.push(obj([
            ("id", json!(format!("place:{}", ascii_lower(place)))),
            ("type", json!("Place")),
            ("name", json!(place)),
            ("properties", json!({})),
        ]));
    }
    let ids: Vec<String> = entities
        .iter()
        .map(|e| e["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    let kind_of = |id: &str| id.split(':').next().unwrap_or_default().to_owned();
    let mut relations = Vec::new();
    for (i, from) in ids.iter().enumerate() {
        for _ in 0..rng.range(1, 3) {
            let to = &ids[rng.below(ids.len() as u64) as usize];
            if to == from {
                continue;
            }
            let relation = match (kind_of(from).as_str(), kind_of(to).as_str()) {
                ("person", "org") => "WORKS_AT",
                ("person", "project") => "CONTRIBUTES_TO",
                ("person", "person") => "KNOWS",
                (_, "place") => "LOCATED_IN",
                ("org", "project") => "SPONSORS",
                _ => "RELATED_TO",
            };
            relations.push(obj_opt([
                ("from", Some(json!(from))),
                ("to", Some(json!(to))),
                ("type", Some(json!(relation))),
                (
                    "confidence",
                    (i % 3 != 0).then(|| json!(rng.decimal(0.5, 0.99, 2))),
                ),
            ]));
        }
    }
    Entry::generic(
        "knowledge_graph",
        "query_knowledge_graph",
        "a knowledge graph: typed entities with free-form properties and weighted relations",
        json!({"entities": entities, "relations": relations}),
    )
}

fn nested_config() -> Entry {
    Entry::generic(
        "nested_config",
        "get_config",
        "a deeply nested service configuration: objects in objects, small arrays of objects",
        json!({
            "environment": "production",
            "region": "eu-west-1",
            "version": "2025.06.2",
            "http": {
                "listen": "0.0.0.0:8443",
                "tls": {"cert": "/etc/shop/tls/cert.pem", "key": "/etc/shop/tls/key.pem", "minVersion": "1.2"},
                "timeouts": {"readMs": 5000, "writeMs": 10000, "idleMs": 60000},
                "cors": {"allowedOrigins": ["https://shop.example.com", "https://admin.example.com"], "allowCredentials": true}
            },
            "database": {
                "primary": {"host": "db-primary.internal", "port": 5432, "name": "shop", "pool": {"min": 4, "max": 32, "idleTimeoutMs": 30000}},
                "replicas": [
                    {"host": "db-replica-1.internal", "port": 5432, "weight": 2, "maxLagMs": 500},
                    {"host": "db-replica-2.internal", "port": 5432, "weight": 1, "maxLagMs": 500}
                ],
                "migrations": {"dir": "migrations", "lockTimeoutMs": 15000}
            },
            "cache": {"driver": "redis", "addr": "redis.internal:6379", "db": 0, "ttl": {"catalog": "10m", "session": "24h", "rateLimit": "1m"}},
            "auth": {
                "providers": [
                    {"name": "google", "clientId": "shop-web.apps.googleusercontent.com", "scopes": ["openid", "email", "profile"], "config": {"hostedDomain": null, "prompt": "select_account"}},
                    {"name": "github", "clientId": "Iv1.8a61f9b3a7aba766", "scopes": ["read:user", "user:email"], "config": {"allowSignup": false}},
                    {"name": "saml", "clientId": "urn:acme:shop", "scopes": [], "config": {"metadataUrl": "https://idp.acme.example/metadata", "signRequests": true}}
                ],
                "session": {"cookie": "shop_sid", "maxAgeHours": 24, "sameSite": "Lax", "secure": true},
                "passwordPolicy": {"minLength": 12, "requireSymbols": true, "breachCheck": {"enabled": true, "provider": "hibp", "timeoutMs": 800}}
            },
            "features": {
                "checkout": {"newFlow": {"enabled": true, "rollout": 0.25, "variants": [{"name": "control", "weight": 50}, {"name": "one-page", "weight": 50, "config": {"showUpsell": false}}]}},
                "search": {"engine": "meilisearch", "typoTolerance": {"enabled": true, "minWordSizeForTypos": {"oneTypo": 5, "twoTypos": 9}}}
            },
            "observability": {
                "logging": {"level": "info", "format": "json", "sampling": {"debug": 0.01, "info": 1.0}},
                "metrics": {"exporter": "prometheus", "path": "/metrics", "buckets": [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5]},
                "tracing": {"exporter": "otlp", "endpoint": "http://otel-collector:4317", "sampleRatio": 0.1}
            },
            "workers": {"concurrency": 8, "queues": {"emails": {"priority": 3, "retries": {"max": 5, "backoff": "exponential", "initialMs": 200}}, "webhooks": {"priority": 5, "retries": {"max": 10, "backoff": "exponential", "initialMs": 500}}}}
        }),
    )
}

fn feature_flags() -> Entry {
    let mut rng = Rng::new(0xA91_0009);
    const AREAS: &[&str] = &[
        "checkout", "search", "catalog", "billing", "auth", "mobile", "admin",
    ];
    const FEATURES: &[&str] = &[
        "new_flow",
        "one_click",
        "apple_pay",
        "typo_tolerance",
        "semantic_ranking",
        "bulk_edit",
        "dark_mode",
        "passkeys",
        "sso_enforcement",
        "usage_alerts",
        "invoice_v2",
        "lazy_images",
    ];
    let mut flags = Map::new();
    while flags.len() < 36 {
        let key = format!("{}.{}", rng.pick(AREAS), rng.pick(FEATURES));
        if flags.contains_key(&key) {
            continue;
        }
        let enabled = rng.chance(60);
        let (_, owner) = person(&mut rng);
        flags.insert(
            key,
            obj_opt([
                ("enabled", Some(json!(enabled))),
                (
                    "rollout",
                    Some(json!(if enabled {
                        *rng.pick(&[5u64, 10, 25, 50, 100])
                    } else {
                        0
                    })),
                ),
                ("owner", Some(json!(owner))),
                (
                    "updatedAt",
                    Some(json!(timestamp(EPOCH - rng.below(86_400 * 60) as i64))),
                ),
                (
                    "expires",
                    rng.chance(30)
                        .then(|| json!(date(EPOCH / 86_400 + rng.range(10, 120) as i64))),
                ),
            ]),
        );
    }
    Entry::generic(
        "feature_flags",
        "list_feature_flags",
        "feature flags keyed by dotted name: a map of small objects, one optional field",
        json!({"flags": flags, "environment": "production"}),
    )
}

fn search_results() -> Entry {
    let mut rng = Rng::new(0xA91_000A);
    const HITS: &[(&str, &str, &str)] = &[
        (
            "Idempotency keys: designing safe retries for payment APIs",
            "https://engineering.example.com/blog/idempotency-keys",
            "An idempotency key lets a client retry a request without performing the operation twice. The server stores the key with the response of the first attempt; a retry with the same key gets the stored response instead of a new charge. Keys should expire (24 hours is common), be scoped to the authenticated account, and be checked inside the same transaction that writes the order, or two concurrent retries can both pass the check.",
        ),
        (
            "RFC draft: The Idempotency-Key HTTP Header Field",
            "https://datatracker.example.org/doc/draft-ietf-httpapi-idempotency-key-header/",
            "This document specifies the Idempotency-Key request header field, which clients use to make non-idempotent HTTP methods such as POST or PATCH fault-tolerant. It defines the field's syntax (a String structured header), the server's obligations when a key is reused with a different payload (respond 422 Unprocessable Content), and when a request with the same key is still being processed (respond 409 Conflict).",
        ),
        (
            "Stack Overflow: How do I prevent duplicate orders when the user double-clicks \"Pay\"?",
            "https://stackoverflow.example.com/questions/51234567",
            "Disable the button client-side, but never rely on it: network retries and impatient users will still send the request twice. Generate a UUID when the checkout page loads, send it with the POST, and add a UNIQUE constraint on (account_id, idempotency_key). On a unique violation, look up and return the existing order. Answer by a user with 48k reputation, accepted, 312 votes.",
        ),
        (
            "Postgres docs — INSERT ... ON CONFLICT",
            "https://www.postgresql.example.org/docs/current/sql-insert.html",
            "The optional ON CONFLICT clause specifies an alternative action to raising a unique violation or exclusion constraint violation error. ON CONFLICT DO NOTHING simply avoids inserting a row as its alternative action. ON CONFLICT DO UPDATE updates the existing row that conflicts with the row proposed for insertion as its alternative action; it guarantees an atomic INSERT or UPDATE outcome, provided there is no independent error.",
        ),
        (
            "Retries, timeouts and backoff with jitter",
            "https://aws.example.com/builders-library/timeouts-retries-and-backoff-with-jitter/",
            "Retries are selfish: when a server is overloaded, each client that retries adds more load and makes recovery slower. Capped exponential backoff with jitter spreads retries out; a token bucket limits the retry rate per client. Make the operation idempotent before you make it retryable, or a retry after a timeout can apply a change twice.",
        ),
        (
            "GitHub issue #4410: duplicate charge after gateway timeout",
            "https://github.example.com/acme/shop/issues/4410",
            "Customer was charged twice for order ORD-104871. Logs show the first POST /v1/orders timed out at the gateway after 30 s while the order service completed the charge at 31.2 s; the mobile client retried and created a second order. Proposal: accept an Idempotency-Key header and forward it to the payment provider.",
        ),
        (
            "Designing Data-Intensive Applications, ch. 11 (excerpt)",
            "https://books.example.com/ddia/ch11#exactly-once",
            "Exactly-once semantics in stream processing usually means effectively-once: the processing may happen more than once, but the effect is as if it happened once. Idempotent writes, with a request id or offset stored alongside the data, are the simplest way to get there.",
        ),
        (
            "Stripe API reference: Idempotent requests",
            "https://docs.payments.example.com/api/idempotent_requests",
            "The API supports idempotency for safely retrying requests without accidentally performing the same operation twice. To perform an idempotent request, provide an additional Idempotency-Key: <key> header to the request. Keys are eligible to be removed from the system automatically after they're at least 24 hours old.",
        ),
    ];
    let results: Vec<Value> = HITS
        .iter()
        .enumerate()
        .map(|(i, &(title, url, snippet))| {
            obj([
                ("rank", json!(i + 1)),
                ("title", json!(title)),
                ("url", json!(url)),
                ("snippet", json!(snippet)),
                ("score", json!(rng.decimal(0.62, 0.97, 3))),
                (
                    "publishedAt",
                    json!(date(EPOCH / 86_400 - rng.range(30, 2000) as i64)),
                ),
            ])
        })
        .collect();
    Entry::generic(
        "search_results",
        "web_search",
        "web search results with long snippets: prose dominates, structure is light",
        json!({"query": "idempotency key retries duplicate payment", "totalResults": 18_400, "results": results}),
    )
}

fn repositories() -> Entry {
    let mut rng = Rng::new(0xA91_000B);
    const REPOS: &[(&str, &str, &str, &[&str])] = &[
        (
            "acme/shop",
            "The storefront monolith: HTTP API, workers and admin UI.",
            "Go",
            &["ecommerce", "api"],
        ),
        (
            "acme/shop-web",
            "Next.js frontend for shop.example.com",
            "TypeScript",
            &["nextjs", "react"],
        ),
        (
            "acme/payments-sdk",
            "Typed client for the payments API, with retries and idempotency keys built in.",
            "Rust",
            &["payments", "sdk"],
        ),
        (
            "acme/infra",
            "Terraform modules and Helm charts for every environment",
            "HCL",
            &["terraform", "kubernetes", "helm"],
        ),
        (
            "acme/design-system",
            "Components, tokens & icons (Figma ↔ code)",
            "TypeScript",
            &["design-system", "storybook"],
        ),
        (
            "acme/search-indexer",
            "Streams catalog changes from Postgres into Meilisearch",
            "Rust",
            &["search", "cdc"],
        ),
        (
            "acme/mobile",
            "iOS and Android apps (React Native)",
            "TypeScript",
            &["react-native", "ios", "android"],
        ),
        (
            "acme/data-pipelines",
            "Airflow DAGs: nightly exports, churn model, finance reports",
            "Python",
            &["airflow", "etl"],
        ),
        (
            "acme/agent-tools",
            "MCP servers that expose our internal APIs to coding agents",
            "Rust",
            &["mcp", "agents", "llm"],
        ),
        (
            "acme/legacy-admin",
            "DEPRECATED: old admin panel, read-only since 2024",
            "PHP",
            &[],
        ),
        (
            "acme/load-tests",
            "k6 scenarios for checkout, search and login",
            "JavaScript",
            &["k6", "performance"],
        ),
        (
            "acme/handbook",
            "How we work: on-call, incident reviews, RFC process",
            "Markdown",
            &["docs"],
        ),
        (
            "acme/ml-recs",
            "Product recommendations: training + online serving",
            "Python",
            &["ml", "recommendations"],
        ),
        (
            "acme/edge-proxy",
            "Envoy config and WASM filters for the edge",
            "C++",
            &["envoy", "wasm"],
        ),
        (
            "acme/status-page",
            "Public status page and incident feed",
            "Go",
            &["status", "uptime"],
        ),
    ];
    let repos: Vec<Value> = REPOS
        .iter()
        .enumerate()
        .map(|(i, &(full_name, description, language, topics))| {
            let name = full_name.split('/').nth(1).unwrap_or(full_name);
            obj([
                ("id", json!(48_213_007 + i as u64 * 1_337 + rng.below(999))),
                ("name", json!(name)),
                ("full_name", json!(full_name)),
                ("description", json!(description)),
                (
                    "private",
                    json!(!name.ends_with("sdk") && !name.contains("design")),
                ),
                ("language", json!(language)),
                ("topics", json!(topics)),
                ("stargazers_count", json!(rng.range(0, 2400))),
                ("forks_count", json!(rng.range(0, 180))),
                ("open_issues_count", json!(rng.range(0, 140))),
                (
                    "default_branch",
                    json!(if i % 4 == 3 { "master" } else { "main" }),
                ),
                ("archived", json!(name == "legacy-admin")),
                (
                    "pushed_at",
                    json!(timestamp(EPOCH - rng.below(86_400 * 120) as i64)),
                ),
            ])
        })
        .collect();
    Entry::generic(
        "repositories",
        "list_repositories",
        "an organisation's repositories: a wide record with descriptions and topic arrays",
        Value::Array(repos),
    )
}

fn contacts() -> Entry {
    let mut rng = Rng::new(0xA91_000C);
    const GROUPS: &[(u64, &str)] = &[
        (1, "Customers"),
        (2, "Suppliers"),
        (3, "Press"),
        (4, "Investors"),
        (5, "Board"),
        (6, "Alumni"),
    ];
    let contacts: Vec<Value> = (0..40)
        .map(|i| {
            let (name, login) = person(&mut rng);
            let groups: Vec<Value> = rng
                .sample_between(GROUPS, 1, 3)
                .into_iter()
                .map(|&(id, name)| json!({"id": id, "name": name}))
                .collect();
            obj_opt([
                ("id", Some(json!(format!("c_{:04}", 310 + i)))),
                ("name", Some(json!(name))),
                ("email", Some(json!(format!("{login}@mail.example")))),
                (
                    "phone",
                    rng.chance(55).then(|| {
                        json!(format!(
                            "+1-555-{:03}-{:04}",
                            rng.range(100, 999),
                            rng.below(10_000)
                        ))
                    }),
                ),
                (
                    "company",
                    rng.chance(40).then(|| {
                        json!(rng.pick(&[
                            "Acme Corp",
                            "Globex",
                            "Initech",
                            "Hooli",
                            "Vandelay Industries"
                        ]))
                    }),
                ),
                ("groups", Some(Value::Array(groups))),
            ])
        })
        .collect();
    Entry::generic(
        "contacts",
        "list_contacts",
        "contacts with nested group memberships (arrays of objects inside rows) and optional fields",
        json!({ "contacts": contacts }),
    )
}

fn pods() -> Entry {
    let mut rng = Rng::new(0xA91_000D);
    const APPS: &[(&str, &str)] = &[
        ("shop-api", "ghcr.io/acme/shop:2025.06.2"),
        ("shop-worker", "ghcr.io/acme/shop:2025.06.2"),
        ("search-indexer", "ghcr.io/acme/search-indexer:1.14.0"),
        ("redis", "redis:7.2-alpine"),
    ];
    let mut items = Vec::new();
    for &(app, image) in APPS {
        for _ in 0..rng.range(2, 4) {
            let phase = if rng.chance(85) {
                "Running"
            } else {
                *rng.pick(&["Pending", "CrashLoopBackOff"])
            };
            let ready = phase == "Running";
            let name = format!("{app}-{}-{}", rng.hex(10), rng.hex(5));
            let mut containers = vec![json!({
                "name": app,
                "image": image,
                "ready": ready,
                "restartCount": if ready { rng.below(3) } else { rng.range(4, 40) },
            })];
            if app.starts_with("shop") {
                containers.push(json!({"name": "envoy", "image": "envoyproxy/envoy:v1.30.1", "ready": true, "restartCount": 0}));
            }
            items.push(json!({
                "metadata": {
                    "name": name,
                    "namespace": "production",
                    "labels": {"app": app, "app.kubernetes.io/part-of": "shop", "pod-template-hash": rng.hex(10)},
                    "creationTimestamp": timestamp(EPOCH - rng.below(86_400 * 9) as i64),
                },
                "spec": {"nodeName": format!("ip-10-0-{}-{}.eu-west-1.compute.internal", rng.range(1, 3), rng.range(10, 250))},
                "status": {
                    "phase": phase,
                    "podIP": format!("10.0.{}.{}", rng.range(1, 3), rng.range(2, 254)),
                    "containerStatuses": containers,
                },
            }));
        }
    }
    Entry::generic(
        "kubernetes_pods",
        "kubectl_get_pods",
        "a Kubernetes PodList: nested metadata, label maps with dotted keys, container arrays",
        json!({"apiVersion": "v1", "kind": "PodList", "items": items}),
    )
}

fn sql_rows() -> Entry {
    let mut rng = Rng::new(0xA91_000E);
    let rows: Vec<Value> = (0..40)
        .map(|i| {
            let (name, _) = person(&mut rng);
            let shipped = rng.chance(70);
            json!([
                90_000 + i * 13 + rng.below(13),
                name,
                rng.pick(&["DE", "BR", "KE", "KR", "US", "FR"]),
                rng.range(1, 12),
                (rng.range(999, 89_999) as f64) / 100.0,
                if shipped {
                    json!(timestamp(EPOCH - rng.below(86_400 * 20) as i64))
                } else {
                    Value::Null
                },
                if rng.chance(15) {
                    json!("gift wrap; leave at the door")
                } else {
                    Value::Null
                },
            ])
        })
        .collect();
    Entry::generic(
        "sql_result",
        "run_sql",
        "a SQL query result as column names plus rows of arrays, with NULLs",
        json!({
            "sql": "SELECT o.id, c.name, c.country, count(li.*) AS items, o.total, o.shipped_at, o.note FROM orders o JOIN customers c ON c.id = o.customer_id JOIN line_items li ON li.order_id = o.id WHERE o.created_at > now() - interval '30 days' GROUP BY o.id, c.id ORDER BY o.id LIMIT 40",
            "columns": ["id", "name", "country", "items", "total", "shipped_at", "note"],
            "rows": rows,
            "rowCount": 40,
            "elapsedMs": 38,
        }),
    )
}
