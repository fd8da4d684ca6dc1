//! TOON-style data sets: the eight shapes and sizes of TOON's token-efficiency benchmark
//! (`benchmarks/src/datasets.ts` in toon-format/toon: 2,000 employees, 500 orders, 365 days of
//! analytics, 100 repositories, 2,000 event logs, one nested configuration, 500 feature flags,
//! 1,000 contacts), generated here with this crate's seeded [`Rng`] and word lists of our own.
//!
//! TOON generates its data with faker.js and reads its repositories from a file of real GitHub
//! data; neither is reproduced byte for byte here. The fields, their types, value ranges,
//! optional members and nesting follow TOON's generator, so every format meets the same
//! structures (flat tables, nested objects, optional members, keyed maps, deep nesting) it
//! meets there.

use serde_json::{json, Map, Value};

use crate::Rng;

const FIRST: &[&str] = &[
    "Aaliyah",
    "Benjamin",
    "Camila",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiroshi",
    "Isabel",
    "Jamal",
    "Katarina",
    "Liam",
    "Maya",
    "Noah",
    "Olivia",
    "Pedro",
    "Quinn",
    "Rosa",
    "Samuel",
    "Tanya",
    "Umar",
    "Valentina",
    "William",
    "Ximena",
    "Yusuf",
    "Zoe",
    "Arjun",
    "Beatrice",
    "Connor",
    "Daniela",
];
const LAST: &[&str] = &[
    "Anderson",
    "Brown",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Hoffmann",
    "Ivanova",
    "Johnson",
    "Kowalski",
    "Lindqvist",
    "Martinez",
    "Nakamura",
    "O'Connor",
    "Patel",
    "Quispe",
    "Rossi",
    "Schmidt",
    "Thompson",
    "Uchenna",
    "Vasquez",
    "Williams",
    "Xu",
    "Yilmaz",
    "Zimmerman",
    "Bauch",
    "Kuhn",
    "Runolfsdottir",
    "Wehner-Schaefer",
];
const DOMAINS: &[&str] = &[
    "gmail.com",
    "yahoo.com",
    "hotmail.com",
    "example.org",
    "mail.net",
    "outlook.com",
];
const WORDS: &[&str] = &[
    "alias", "bonus", "canto", "decet", "error", "fugit", "gratia", "harum", "ipsum", "labore",
    "magnam", "nihil", "omnis", "possimus", "quasi", "ratione", "sequi", "tempora", "ullam",
    "velit", "vitae", "amet", "soluta", "dolor",
];
const NOUNS: &[&str] = &[
    "checkout",
    "banner",
    "search",
    "profile",
    "cart",
    "invoice",
    "export",
    "sidebar",
    "billing",
    "avatar",
    "digest",
    "onboarding",
    "wishlist",
    "review",
    "coupon",
    "tracker",
];
const CITIES: &[&str] = &[
    "Lake Ashleyport",
    "New Orleans",
    "Port Kailey",
    "Springfield",
    "East Rosalind",
    "São Paulo",
    "North Marisa",
    "Zürich",
    "South Bend",
    "West Jordan",
    "Fort Collins",
    "Lake Mariah",
];
const COUNTRIES: &[&str] = &[
    "United States of America",
    "Germany",
    "Brazil",
    "Japan",
    "Côte d'Ivoire",
    "Canada",
    "India",
    "Netherlands",
    "Kenya",
    "New Zealand",
    "Republic of Korea",
    "Mexico",
];
const TOPICS: &[&str] = &[
    "JavaScript library for building user interfaces",
    "A declarative, efficient, and flexible framework",
    "The fast, reliable, and secure package manager",
    "Curated list of awesome resources, tools, and tutorials",
    "An open-source machine learning framework for everyone",
    "Production-grade container scheduling and management",
    "Free programming books in many languages",
    "A collection of design patterns, algorithms, and data structures",
    "The Rust programming language",
    "Developer roadmaps, guides, and other educational content",
    "Terminal emulator, shell, and editor written in Go",
    "Interactive roadmaps (frontend, backend, devops) to help developers grow",
    "🔥 Fast, lightweight web framework for Node.js",
    "Visual Studio Code",
    "A utility-first CSS framework for rapid UI development",
];

impl Rng {
    fn full_name(&mut self) -> String {
        format!("{} {}", self.pick(FIRST), self.pick(LAST))
    }

    fn email(&mut self) -> String {
        let first = self.pick(FIRST).to_lowercase();
        let last = self.pick(LAST).to_lowercase().replace(['\'', '-'], "");
        let n = self.below(100);
        format!("{first}.{last}{n}@{}", self.pick(DOMAINS))
    }

    fn phone(&mut self) -> String {
        let (a, b, c) = (
            self.range(200, 989),
            self.range(100, 999),
            self.range(1000, 9999),
        );
        match self.below(4) {
            0 => format!("({a}) {b}-{c}"),
            1 => format!("{a}-{b}-{c}"),
            2 => format!("1-{a}-{b}-{c} x{}", self.range(1, 999)),
            _ => format!("{a}.{b}.{c}"),
        }
    }

    /// A date in 2025 (`YYYY-MM-DD`).
    fn date(&mut self) -> String {
        format!("2025-{:02}-{:02}", self.range(1, 5), self.range(1, 28))
    }

    /// A timestamp in 2025 (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    fn timestamp(&mut self) -> String {
        format!(
            "{}T{:02}:{:02}:{:02}.{:03}Z",
            self.date(),
            self.below(24),
            self.below(60),
            self.below(60),
            self.below(1000)
        )
    }

    fn sentence(&mut self) -> String {
        let n = self.range(3, 8) as usize;
        let mut words: Vec<String> = (0..n).map(|_| (*self.pick(WORDS)).to_owned()).collect();
        if let Some(first) = words.first_mut() {
            let mut chars = first.chars();
            if let Some(c) = chars.next() {
                *first = c.to_uppercase().chain(chars).collect();
            }
        }
        format!("{}.", words.join(" "))
    }

    fn alphanumeric(&mut self, len: usize) -> String {
        const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        (0..len)
            .map(|_| char::from(CHARS[self.below(CHARS.len() as u64) as usize]))
            .collect()
    }
}

/// The eight TOON-style data sets, by TOON's names, in TOON's order.
pub fn toon_datasets() -> Vec<(&'static str, Value)> {
    vec![
        ("tabular", employees(2_000)),
        ("nested", ecommerce_orders(500)),
        ("analytics", analytics(365)),
        ("github", repositories(100)),
        ("event-logs", event_logs(2_000)),
        ("nested-config", nested_config()),
        ("keyed", feature_flags(500)),
        ("nested-group", contacts(1_000)),
    ]
}

/// `{"employees": [...]}`: id, name, email, department (six, in turn), salary, years of
/// experience and an 80 % active flag.
pub fn employees(n: usize) -> Value {
    const DEPARTMENTS: &[&str] = &[
        "Engineering",
        "Sales",
        "Marketing",
        "HR",
        "Operations",
        "Finance",
    ];
    let mut rng = Rng::new(0x7007_0001);
    let employees: Vec<Value> = (0..n)
        .map(|i| {
            let years = rng.range(1, 25);
            json!({
                "id": i + 1,
                "name": rng.full_name(),
                "email": rng.email(),
                "department": DEPARTMENTS[i % DEPARTMENTS.len()],
                "salary": rng.range(45_000, 150_000),
                "yearsExperience": years,
                "active": rng.chance(80),
            })
        })
        .collect();
    json!({ "employees": employees })
}

/// `{"orders": [...]}`: a customer object (20 customers in turn), one to four line items,
/// totals, a status in turn and an order date.
pub fn ecommerce_orders(n: usize) -> Value {
    const PRODUCTS: &[&str] = &[
        "Wireless Mouse",
        "USB Cable",
        "Laptop Stand",
        "Keyboard",
        "Webcam",
        "Headphones",
        "Monitor",
        "Desk Lamp",
    ];
    const STATUSES: &[&str] = &["pending", "processing", "shipped", "delivered", "cancelled"];
    let mut rng = Rng::new(0x7007_0002);
    let orders: Vec<Value> = (0..n)
        .map(|i| {
            let items: Vec<Value> = (0..rng.range(1, 4) as usize)
                .map(|j| {
                    let price = rng.decimal(9.99, 199.99, 2);
                    json!({
                        "sku": format!("SKU-{}", rng.alphanumeric(6)),
                        "name": PRODUCTS[j % PRODUCTS.len()],
                        "quantity": rng.range(1, 5),
                        "price": price,
                    })
                })
                .collect();
            let subtotal: f64 = items
                .iter()
                .map(|item| {
                    item["price"].as_f64().unwrap_or(0.0) * item["quantity"].as_f64().unwrap_or(0.0)
                })
                .sum();
            let subtotal = (subtotal * 100.0).round() / 100.0;
            let tax = (subtotal * 8.0).round() / 100.0;
            json!({
                "orderId": format!("ORD-{:04}", i + 1),
                "customer": {
                    "id": i % 20 + 1,
                    "name": rng.full_name(),
                    "email": rng.email(),
                    "phone": rng.phone(),
                },
                "items": items,
                "subtotal": subtotal,
                "tax": tax,
                "total": ((subtotal + tax) * 100.0).round() / 100.0,
                "status": STATUSES[i % STATUSES.len()],
                "orderDate": rng.date(),
            })
        })
        .collect();
    json!({ "orders": orders })
}

/// `{"metrics": [...]}`: one day each from 2025-01-01: views (fewer at weekends), clicks,
/// conversions, revenue and bounce rate.
pub fn analytics(days: usize) -> Value {
    const MONTHS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut rng = Rng::new(0x7007_0003);
    let (mut month, mut day) = (0usize, 1u32);
    let metrics: Vec<Value> = (0..days)
        .map(|i| {
            let date = format!("2025-{:02}-{day:02}", month + 1);
            // 2025-01-01 was a Wednesday.
            let weekend = matches!((i + 3) % 7, 0 | 6);
            let base: i64 = if weekend { 3500 } else { 5000 };
            let views = (base + rng.range(0, 4000) as i64 - 1000).max(0);
            let clicks = (views as f64 * rng.decimal(0.02, 0.08, 4)).round();
            let conversions = (clicks * rng.decimal(0.05, 0.15, 4)).round();
            let order_value = rng.decimal(49.99, 299.99, 2);
            let revenue = (conversions * order_value * 100.0).round() / 100.0;
            day += 1;
            if day > MONTHS[month % 12] {
                day = 1;
                month += 1;
            }
            json!({
                "date": date,
                "views": views,
                "clicks": clicks as i64,
                "conversions": conversions as i64,
                "revenue": revenue,
                "bounceRate": rng.decimal(0.3, 0.7, 2),
            })
        })
        .collect();
    json!({ "metrics": metrics })
}

/// `{"repositories": [...]}`: GitHub-style repository records with free-text descriptions
/// (commas, quotes, emoji) and three timestamps.
pub fn repositories(n: usize) -> Value {
    const OWNERS: &[&str] = &[
        "facebook",
        "microsoft",
        "google",
        "vercel",
        "rust-lang",
        "torvalds",
        "kamranahmedse",
        "sindresorhus",
        "tensorflow",
        "kubernetes",
        "EbookFoundation",
        "public-apis",
    ];
    let mut rng = Rng::new(0x7007_0004);
    let repositories: Vec<Value> = (0..n)
        .map(|i| {
            let owner = *rng.pick(OWNERS);
            let name = format!("{}-{}", rng.pick(NOUNS), rng.pick(WORDS));
            let stars = 400_000 - (i as u64) * 3_500 - rng.below(3_000);
            json!({
                "id": 10_000_000 + rng.below(700_000_000),
                "name": name,
                "repo": format!("{owner}/{name}"),
                "description": format!("{} {}", rng.pick(TOPICS), if rng.chance(30) { "(\"batteries included\")" } else { "" }).trim_end().to_owned(),
                "stars": stars,
                "watchers": stars / 30 + rng.below(500),
                "forks": stars / 5 + rng.below(5_000),
                "defaultBranch": if rng.chance(70) { "main" } else { "master" },
                "createdAt": format!("20{:02}-{:02}-{:02}T{:02}:{:02}:{:02}Z", rng.range(8, 20), rng.range(1, 12), rng.range(1, 28), rng.below(24), rng.below(60), rng.below(60)),
                "updatedAt": rng.timestamp().replace(".000", "").chars().take(19).collect::<String>() + "Z",
                "pushedAt": rng.timestamp().chars().take(19).collect::<String>() + "Z",
            })
        })
        .collect();
    json!({ "repositories": repositories })
}

/// `{"logs": [...]}`: semi-uniform event logs; errors (and 30 % of warnings) carry a nested
/// `error` object with a message, a multi-line stack and a retry flag.
pub fn event_logs(n: usize) -> Value {
    const ENDPOINTS: &[&str] = &[
        "/api/users",
        "/api/orders",
        "/api/products",
        "/api/auth",
        "/api/payments",
    ];
    const MESSAGES: &[&str] = &[
        "Database connection timeout",
        "Invalid authentication token",
        "Resource not found",
        "Internal server error",
        "Rate limit exceeded",
    ];
    let mut rng = Rng::new(0x7007_0005);
    let logs: Vec<Value> = (0..n)
        .map(|_| {
            let level = *rng.pick(&["info", "warn", "error"]);
            let failed = level == "error" || (level == "warn" && rng.chance(30));
            let mut log = Map::new();
            log.insert("timestamp".into(), json!(rng.timestamp()));
            log.insert("level".into(), json!(level));
            log.insert("endpoint".into(), json!(rng.pick(ENDPOINTS)));
            let status = if failed {
                rng.range(400, 599)
            } else {
                rng.range(200, 299)
            };
            log.insert("statusCode".into(), json!(status));
            log.insert("responseTime".into(), json!(rng.range(10, 5_000)));
            log.insert("userId".into(), json!(rng.range(1_000, 9_999)));
            if failed {
                let stack = format!(
                    "Error: {}\n  at {}\n  at {}",
                    rng.sentence(),
                    rng.pick(WORDS),
                    rng.pick(WORDS)
                );
                log.insert(
                    "error".into(),
                    json!({
                        "message": rng.pick(MESSAGES),
                        "stack": stack,
                        "retryable": rng.chance(60),
                    }),
                );
            }
            Value::Object(log)
        })
        .collect();
    json!({ "logs": logs })
}

/// One deeply nested configuration: database with a pool and replicas, feature variants with
/// free-form configs, authentication providers, roles and groups.
pub fn nested_config() -> Value {
    let mut rng = Rng::new(0x7007_0006);
    let domain = |rng: &mut Rng| format!("{}-{}.io", rng.pick(NOUNS), rng.pick(WORDS));
    let replicas: Vec<Value> = (1..=3)
        .map(|i| json!({"host": format!("replica-{i}.{}", domain(&mut rng)), "port": 5432, "priority": i}))
        .collect();
    let members =
        |rng: &mut Rng, n: usize| -> Vec<String> { (0..n).map(|_| rng.email()).collect() };
    json!({
        "environment": rng.pick(&["production", "staging", "development"]),
        "version": format!("{}.{}.{}", rng.below(10), rng.below(20), rng.below(30)),
        "database": {
            "host": domain(&mut rng),
            "port": 5432,
            "name": rng.pick(&["postgres", "mysql", "mongodb", "redis"]),
            "pool": {"min": 2, "max": rng.range(10, 50), "idleTimeout": 30000},
            "replicas": replicas,
        },
        "features": {
            "darkMode": {
                "enabled": rng.chance(50),
                "rollout": rng.below(101),
                "variants": [
                    {"name": "default", "weight": 70, "config": {"theme": "dark", "animations": true}},
                    {"name": "minimal", "weight": 30, "config": {"theme": "dark", "animations": false}},
                ],
            },
            "analytics": {
                "enabled": rng.chance(50),
                "rollout": rng.below(101),
                "variants": [{"name": "full", "weight": 100, "config": {"tracking": "all", "sampling": 1.0}}],
            },
        },
        "authentication": {
            "providers": [
                {
                    "name": "oauth2",
                    "clientId": format!("{}-{}-4{}-a{}-{}", rng.hex(8), rng.hex(4), rng.hex(3), rng.hex(3), rng.hex(12)),
                    "scopes": ["read", "write", "admin"],
                    "config": {
                        "authUrl": format!("https://{}/oauth/authorize", domain(&mut rng)),
                        "tokenUrl": format!("https://{}/oauth/token", domain(&mut rng)),
                    },
                },
                {
                    "name": "saml",
                    "clientId": format!("{}-{}-4{}-b{}-{}", rng.hex(8), rng.hex(4), rng.hex(3), rng.hex(3), rng.hex(12)),
                    "scopes": ["read"],
                    "config": {
                        "entryPoint": format!("https://{}/saml", domain(&mut rng)),
                        "cert": rng.alphanumeric(64),
                    },
                },
            ],
            "session": {"secret": rng.alphanumeric(32), "duration": 86400, "refreshThreshold": 3600},
        },
        "permissions": {
            "roles": {
                "admin": {"permissions": ["read", "write", "delete", "manage_users", "manage_roles"], "inherits": []},
                "editor": {"permissions": ["read", "write"], "inherits": ["viewer"]},
                "viewer": {"permissions": ["read"], "inherits": []},
            },
            "groups": {
                "engineering": {"members": members(&mut rng, 5), "roles": ["admin", "editor"]},
                "support": {"members": members(&mut rng, 3), "roles": ["viewer"]},
            },
        },
    })
}

/// `{"flags": {"flag_0_noun": {...}, ...}}`: a map of flat records keyed by a unique name.
pub fn feature_flags(n: usize) -> Value {
    let mut rng = Rng::new(0x7007_0007);
    let mut flags = Map::new();
    for i in 0..n {
        flags.insert(
            format!("flag_{i}_{}", rng.pick(NOUNS)),
            json!({
                "enabled": rng.chance(60),
                "rollout": rng.below(101),
                "owner": rng.pick(FIRST),
                "updatedAt": rng.date(),
            }),
        );
    }
    json!({ "flags": flags })
}

/// `{"contacts": [...]}`: name, age, email and two uniform nested objects (`address`,
/// `plan`), the shape of TOON's nested field groups.
pub fn contacts(n: usize) -> Value {
    const PLANS: &[(&str, u64)] = &[
        ("free", 0),
        ("starter", 15),
        ("pro", 40),
        ("enterprise", 120),
    ];
    let mut rng = Rng::new(0x7007_0008);
    let contacts: Vec<Value> = (0..n)
        .map(|_| {
            let (plan, price) = *rng.pick(PLANS);
            json!({
                "name": rng.full_name(),
                "age": rng.range(18, 80),
                "email": rng.email(),
                "address": {"city": rng.pick(CITIES), "country": rng.pick(COUNTRIES)},
                "plan": {"name": plan, "price": price},
            })
        })
        .collect();
    json!({ "contacts": contacts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_sets_have_toons_sizes_and_are_seeded() {
        let sets = toon_datasets();
        let names: Vec<&str> = sets.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "tabular",
                "nested",
                "analytics",
                "github",
                "event-logs",
                "nested-config",
                "keyed",
                "nested-group"
            ]
        );
        assert_eq!(sets[0].1["employees"].as_array().unwrap().len(), 2_000);
        assert_eq!(sets[1].1["orders"].as_array().unwrap().len(), 500);
        assert_eq!(sets[2].1["metrics"].as_array().unwrap().len(), 365);
        assert_eq!(sets[2].1["metrics"][364]["date"], "2025-12-31");
        assert_eq!(sets[3].1["repositories"].as_array().unwrap().len(), 100);
        assert_eq!(sets[4].1["logs"].as_array().unwrap().len(), 2_000);
        assert_eq!(sets[6].1["flags"].as_object().unwrap().len(), 500);
        assert_eq!(sets[7].1["contacts"].as_array().unwrap().len(), 1_000);
        let logs = sets[4].1["logs"].as_array().unwrap();
        let failed = logs.iter().filter(|l| l.get("error").is_some()).count();
        assert!((600..1_000).contains(&failed), "{failed} logs with errors");
        assert_eq!(toon_datasets()[1].1, sets[1].1);
    }
}
