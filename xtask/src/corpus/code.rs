//! Code-intelligence responses, in the JSON shapes of the GCX1 per-tool layouts
//! (crates/gcx1/src/layouts.rs): search_symbols, find_usages, get_callers, get_file_summary,
//! get_symbol_source, batch_symbols, get_editing_context, smart_context, analyze.hotspots.
//!
//! Every response is drawn from one imaginary Go service, so ids, paths and lines agree
//! across files the way they would coming from one index.

use serde_json::{json, Value};

use super::gen::{obj, Rng};
use super::Entry;

/// (file, kind, name, signature). `name` is `Recv.Method` for methods.
const SYMBOLS: &[(&str, &str, &str, &str)] = &[
    ("cmd/shopd/main.go", "function", "main", "func main()"),
    ("cmd/shopd/main.go", "function", "run", "func run(ctx context.Context, args []string) error"),
    ("internal/httpapi/server.go", "type", "Server", "type Server struct"),
    ("internal/httpapi/server.go", "function", "NewServer", "func NewServer(cfg config.HTTP, deps Deps) *Server"),
    ("internal/httpapi/server.go", "method", "Server.Start", "func (s *Server) Start(ctx context.Context) error"),
    ("internal/httpapi/server.go", "method", "Server.Shutdown", "func (s *Server) Shutdown(ctx context.Context) error"),
    ("internal/httpapi/server.go", "method", "Server.routes", "func (s *Server) routes() http.Handler"),
    ("internal/httpapi/orders.go", "type", "OrderHandler", "type OrderHandler struct"),
    ("internal/httpapi/orders.go", "function", "NewOrderHandler", "func NewOrderHandler(repo *store.OrderRepo, billing *billing.Service, log *slog.Logger) *OrderHandler"),
    ("internal/httpapi/orders.go", "method", "OrderHandler.Create", "func (h *OrderHandler) Create(w http.ResponseWriter, r *http.Request)"),
    ("internal/httpapi/orders.go", "method", "OrderHandler.Get", "func (h *OrderHandler) Get(w http.ResponseWriter, r *http.Request)"),
    ("internal/httpapi/orders.go", "method", "OrderHandler.List", "func (h *OrderHandler) List(w http.ResponseWriter, r *http.Request)"),
    ("internal/httpapi/orders.go", "method", "OrderHandler.Cancel", "func (h *OrderHandler) Cancel(w http.ResponseWriter, r *http.Request)"),
    ("internal/httpapi/orders.go", "function", "decodeOrderRequest", "func decodeOrderRequest(r *http.Request) (createOrderRequest, error)"),
    ("internal/httpapi/orders.go", "type", "createOrderRequest", "type createOrderRequest struct"),
    ("internal/httpapi/orders.go", "function", "writeJSON", "func writeJSON(w http.ResponseWriter, status int, v any)"),
    ("internal/httpapi/cart.go", "type", "CartHandler", "type CartHandler struct"),
    ("internal/httpapi/cart.go", "method", "CartHandler.AddItem", "func (h *CartHandler) AddItem(w http.ResponseWriter, r *http.Request)"),
    ("internal/httpapi/cart.go", "method", "CartHandler.RemoveItem", "func (h *CartHandler) RemoveItem(w http.ResponseWriter, r *http.Request)"),
    ("internal/httpapi/cart.go", "method", "CartHandler.Checkout", "func (h *CartHandler) Checkout(w http.ResponseWriter, r *http.Request)"),
    ("internal/httpapi/middleware.go", "function", "RequireAuth", "func RequireAuth(signer *auth.Signer) func(http.Handler) http.Handler"),
    ("internal/httpapi/middleware.go", "function", "RequestID", "func RequestID(next http.Handler) http.Handler"),
    ("internal/httpapi/middleware.go", "function", "Recover", "func Recover(log *slog.Logger) func(http.Handler) http.Handler"),
    ("internal/httpapi/middleware.go", "function", "withTimeout", "func withTimeout(d time.Duration, next http.Handler) http.Handler"),
    ("internal/auth/token.go", "type", "Claims", "type Claims struct"),
    ("internal/auth/token.go", "variable", "ErrTokenExpired", "var ErrTokenExpired = errors.New(\"auth: token expired\")"),
    ("internal/auth/token.go", "type", "Signer", "type Signer struct"),
    ("internal/auth/token.go", "function", "NewSigner", "func NewSigner(key []byte, ttl time.Duration) *Signer"),
    ("internal/auth/token.go", "method", "Signer.Sign", "func (s *Signer) Sign(c Claims) (string, error)"),
    ("internal/auth/token.go", "function", "ParseToken", "func ParseToken(s *Signer, raw string) (Claims, error)"),
    ("internal/auth/session.go", "type", "SessionStore", "type SessionStore struct"),
    ("internal/auth/session.go", "method", "SessionStore.Get", "func (s *SessionStore) Get(ctx context.Context, id string) (Session, error)"),
    ("internal/auth/session.go", "method", "SessionStore.Put", "func (s *SessionStore) Put(ctx context.Context, sess Session) error"),
    ("internal/auth/session.go", "method", "SessionStore.Revoke", "func (s *SessionStore) Revoke(ctx context.Context, id string) error"),
    ("internal/store/db.go", "type", "DB", "type DB struct"),
    ("internal/store/db.go", "function", "Open", "func Open(ctx context.Context, cfg Config) (*DB, error)"),
    ("internal/store/db.go", "method", "DB.Tx", "func (db *DB) Tx(ctx context.Context, fn func(pgx.Tx) error) error"),
    ("internal/store/db.go", "method", "DB.Close", "func (db *DB) Close()"),
    ("internal/store/orders.go", "type", "Order", "type Order struct"),
    ("internal/store/orders.go", "type", "OrderRepo", "type OrderRepo struct"),
    ("internal/store/orders.go", "method", "OrderRepo.Create", "func (r *OrderRepo) Create(ctx context.Context, o *Order) error"),
    ("internal/store/orders.go", "method", "OrderRepo.FindByID", "func (r *OrderRepo) FindByID(ctx context.Context, id int64) (*Order, error)"),
    ("internal/store/orders.go", "method", "OrderRepo.ListByCustomer", "func (r *OrderRepo) ListByCustomer(ctx context.Context, customerID int64, page Page) ([]Order, error)"),
    ("internal/store/orders.go", "method", "OrderRepo.UpdateStatus", "func (r *OrderRepo) UpdateStatus(ctx context.Context, id int64, status OrderStatus) error"),
    ("internal/store/orders.go", "type", "OrderStatus", "type OrderStatus string"),
    ("internal/store/orders.go", "constant", "StatusPending", "const StatusPending OrderStatus = \"pending\""),
    ("internal/billing/invoice.go", "type", "Invoice", "type Invoice struct"),
    ("internal/billing/invoice.go", "function", "BuildInvoice", "func BuildInvoice(o *store.Order, rates TaxTable) (*Invoice, error)"),
    ("internal/billing/invoice.go", "method", "Invoice.Total", "func (inv *Invoice) Total() Money"),
    ("internal/billing/invoice.go", "function", "applyTax", "func applyTax(amount Money, rate Rate) Money"),
    ("internal/billing/service.go", "type", "Service", "type Service struct"),
    ("internal/billing/service.go", "method", "Service.Charge", "func (s *Service) Charge(ctx context.Context, o *store.Order) (*Receipt, error)"),
    ("internal/billing/stripe.go", "type", "StripeClient", "type StripeClient struct"),
    ("internal/billing/stripe.go", "method", "StripeClient.Charge", "func (c *StripeClient) Charge(ctx context.Context, amount Money, token string) (string, error)"),
    ("internal/billing/stripe.go", "method", "StripeClient.Refund", "func (c *StripeClient) Refund(ctx context.Context, chargeID string) error"),
    ("internal/catalog/catalog.go", "type", "Catalog", "type Catalog struct"),
    ("internal/catalog/catalog.go", "method", "Catalog.Lookup", "func (c *Catalog) Lookup(ctx context.Context, sku string) (Product, error)"),
    ("internal/catalog/catalog.go", "method", "Catalog.Search", "func (c *Catalog) Search(ctx context.Context, q string, limit int) ([]Product, error)"),
    ("internal/worker/queue.go", "interface", "Queue", "type Queue interface"),
    ("internal/worker/queue.go", "method", "RedisQueue.Push", "func (q *RedisQueue) Push(ctx context.Context, job Job) error"),
    ("internal/worker/queue.go", "method", "RedisQueue.Pop", "func (q *RedisQueue) Pop(ctx context.Context) (Job, error)"),
    ("internal/worker/worker.go", "function", "RunWorker", "func RunWorker(ctx context.Context, q Queue, handlers map[string]Handler) error"),
    ("internal/worker/worker.go", "function", "sendOrderConfirmation", "func sendOrderConfirmation(ctx context.Context, job Job) error"),
    ("internal/config/config.go", "type", "Config", "type Config struct"),
    ("internal/config/config.go", "function", "Load", "func Load(path string) (*Config, error)"),
    ("internal/config/config.go", "method", "Config.Validate", "func (c *Config) Validate() error"),
];

/// One symbol of the service with its line numbers.
#[derive(Debug, Clone)]
struct Sym {
    path: &'static str,
    kind: &'static str,
    name: &'static str,
    sig: &'static str,
    line: u64,
    end_line: u64,
}

impl Sym {
    fn id(&self) -> String {
        format!("{}::{}", self.path, self.name)
    }

    fn short_name(&self) -> &'static str {
        self.name.rsplit('.').next().unwrap_or(self.name)
    }

    fn symbol_ref(&self) -> Value {
        obj([
            ("id", json!(self.id())),
            ("kind", json!(self.kind)),
            ("name", json!(self.short_name())),
            ("path", json!(self.path)),
            ("line", json!(self.line)),
        ])
    }
}

/// The symbol table with deterministic line numbers: each file's symbols follow each other.
fn symbols() -> Vec<Sym> {
    let mut rng = Rng::new(0xC0DE_0001);
    let mut out: Vec<Sym> = Vec::new();
    let mut next_line = 0;
    let mut current = "";
    for &(path, kind, name, sig) in SYMBOLS {
        if path != current {
            current = path;
            next_line = rng.range(9, 24);
        }
        let length = match kind {
            "function" | "method" => rng.range(6, 48),
            "type" | "interface" => rng.range(3, 14),
            _ => 1,
        };
        out.push(Sym {
            path,
            kind,
            name,
            sig,
            line: next_line,
            end_line: next_line + length - 1,
        });
        next_line += length + rng.range(1, 4);
    }
    out
}

fn find<'a>(syms: &'a [Sym], name: &str) -> &'a Sym {
    syms.iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no symbol {name} in the corpus table"))
}

/// The etag of a file or symbol: 16 hex digits.
fn etag(rng: &mut Rng) -> String {
    rng.hex(16)
}

const ORIGINS: &[(&str, f64, &str)] = &[
    ("lsp_resolved", 0.98, "high"),
    ("lsp_dispatch", 0.9, "high"),
    ("ast_resolved", 0.85, "high"),
    ("ast_inferred", 0.7, "medium"),
    ("text_matched", 0.45, "low"),
];

pub(crate) fn entries() -> Vec<Entry> {
    let syms = symbols();
    vec![
        search_symbols(&syms),
        find_usages(&syms),
        get_callers(&syms),
        file_summary(&syms),
        symbol_source(&syms),
        batch_symbols(&syms),
        editing_context(&syms),
        smart_context(&syms),
        hotspots(&syms),
    ]
}

fn search_symbols(syms: &[Sym]) -> Entry {
    let results: Vec<Value> = syms
        .iter()
        .filter(|s| s.name.contains("Order") || s.sig.contains("*store.Order"))
        .map(|s| {
            obj([
                ("id", json!(s.id())),
                ("kind", json!(s.kind)),
                ("name", json!(s.short_name())),
                ("path", json!(s.path)),
                ("line", json!(s.line)),
                ("sig", json!(s.sig)),
            ])
        })
        .collect();
    let total = results.len() + 31;
    Entry::layout(
        "search_symbols",
        "code-intelligence",
        "search_symbols for `Order`: the first hits of a larger result set, with signatures",
        json!({"total": total, "truncated": true, "results": results}),
    )
}

/// A usage row: `from` calls `to`.
fn usage(rng: &mut Rng, from: &Sym, to: &Sym, kind: &str) -> Value {
    let (origin, confidence, _) = *rng.pick(ORIGINS);
    obj([
        ("from", json!(from.id())),
        ("to", json!(to.id())),
        ("edge_kind", json!(kind)),
        ("origin", json!(origin)),
        ("confidence", json!(confidence)),
        ("from_name", json!(from.short_name())),
        ("from_path", json!(from.path)),
        ("from_line", json!(from.line + rng.range(2, 9))),
    ])
}

fn find_usages(syms: &[Sym]) -> Entry {
    let mut rng = Rng::new(0xC0DE_0002);
    let target = find(syms, "Order");
    let users: Vec<&Sym> = syms
        .iter()
        .filter(|s| matches!(s.kind, "function" | "method") && s.name != target.name)
        .collect();
    let mut usages = Vec::new();
    for from in rng.sample(&users, 26) {
        let kind = if from.sig.contains("Order") {
            "references"
        } else {
            *rng.pick(&["references", "references", "instantiates"])
        };
        usages.push(usage(&mut rng, from, target, kind));
    }
    Entry::layout(
        "find_usages",
        "code-intelligence",
        "find_usages of the `store.Order` type: every reference with its resolution tier and confidence",
        json!({ "usages": usages }),
    )
}

fn get_callers(syms: &[Sym]) -> Entry {
    let mut rng = Rng::new(0xC0DE_0003);
    let root = find(syms, "ParseToken");
    let chain = [
        ("RequireAuth", "ParseToken"),
        ("SessionStore.Get", "ParseToken"),
        ("Server.routes", "RequireAuth"),
        ("NewServer", "Server.routes"),
        ("run", "NewServer"),
        ("main", "run"),
        ("OrderHandler.Create", "SessionStore.Get"),
        ("OrderHandler.Cancel", "SessionStore.Get"),
        ("CartHandler.Checkout", "SessionStore.Get"),
        ("CartHandler.AddItem", "SessionStore.Get"),
        ("Server.Start", "Server.routes"),
        ("RunWorker", "ParseToken"),
        ("sendOrderConfirmation", "SessionStore.Get"),
        ("withTimeout", "RequireAuth"),
    ];
    let mut nodes = vec![root.symbol_ref()];
    let mut seen = vec![root.name];
    let mut edges = Vec::new();
    for (from, to) in chain {
        let from_sym = find(syms, from);
        let to_sym = find(syms, to);
        for s in [from_sym, to_sym] {
            if !seen.contains(&s.name) {
                seen.push(s.name);
                nodes.push(s.symbol_ref());
            }
        }
        let (origin, confidence, label) = *rng.pick(ORIGINS);
        edges.push(obj([
            ("from", json!(from_sym.id())),
            ("to", json!(to_sym.id())),
            ("kind", json!("calls")),
            ("origin", json!(origin)),
            ("confidence", json!(confidence)),
            ("label", json!(label)),
        ]));
    }
    Entry::layout(
        "get_callers",
        "code-intelligence",
        "get_callers of `auth.ParseToken`, depth 4: the call graph as node and edge sections",
        json!({
            "tool": "get_callers",
            "total": nodes.len(),
            "truncated": false,
            "nodes": nodes,
            "edges": edges,
        }),
    )
}

fn file_summary(syms: &[Sym]) -> Entry {
    let mut rng = Rng::new(0xC0DE_0004);
    let path = "internal/httpapi/orders.go";
    let mut symbols: Vec<Value> = syms
        .iter()
        .filter(|s| s.path == path)
        .map(|s| {
            obj([
                ("id", json!(s.id())),
                ("kind", json!(s.kind)),
                ("name", json!(s.short_name())),
                ("line", json!(s.line)),
                ("sig", json!(s.sig)),
            ])
        })
        .collect();
    // The struct fields of the file's types, as a summary lists them.
    for (owner, field, ty) in [
        ("OrderHandler", "repo", "*store.OrderRepo"),
        ("OrderHandler", "billing", "*billing.Service"),
        ("OrderHandler", "log", "*slog.Logger"),
        ("createOrderRequest", "CustomerID", "int64"),
        ("createOrderRequest", "Items", "[]lineItem"),
        ("createOrderRequest", "CouponCode", "string"),
        ("createOrderRequest", "IdempotencyKey", "string"),
    ] {
        let parent = find(syms, owner);
        symbols.push(obj([
            ("id", json!(format!("{path}::{owner}.{field}"))),
            ("kind", json!("field")),
            ("name", json!(field)),
            ("line", json!(parent.line + rng.range(1, 3))),
            ("sig", json!(format!("{field} {ty}"))),
        ]));
    }
    symbols.sort_by_key(|s| s["line"].as_u64());
    Entry::layout(
        "get_file_summary",
        "code-intelligence",
        "get_file_summary of internal/httpapi/orders.go: every symbol and field with its signature",
        json!({
            "total_nodes": symbols.len(),
            "total_edges": 41,
            "truncated": false,
            "etag": etag(&mut rng),
            "symbols": symbols,
        }),
    )
}

const CREATE_SOURCE: &str = r#"// Create handles POST /v1/orders: it validates the request, prices the cart,
// stores the order and charges the customer, in that order. A retried request
// with the same Idempotency-Key returns the order created the first time.
func (h *OrderHandler) Create(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	req, err := decodeOrderRequest(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Code: "invalid_request", Message: err.Error()})
		return
	}
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		if prev, ok := h.idem.Lookup(ctx, key); ok {
			writeJSON(w, http.StatusOK, prev)
			return
		}
	}

	order := &store.Order{
		CustomerID: req.CustomerID,
		Status:     store.StatusPending,
		Items:      make([]store.LineItem, 0, len(req.Items)),
	}
	for _, it := range req.Items {
		p, err := h.catalog.Lookup(ctx, it.SKU)
		if err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, apiError{Code: "unknown_sku", Message: fmt.Sprintf("sku %q: %v", it.SKU, err)})
			return
		}
		order.Items = append(order.Items, store.LineItem{SKU: p.SKU, Quantity: it.Quantity, Price: p.Price})
	}

	if err := h.repo.Create(ctx, order); err != nil {
		h.log.ErrorContext(ctx, "create order", "customer", req.CustomerID, "err", err)
		writeJSON(w, http.StatusInternalServerError, apiError{Code: "internal", Message: "could not store the order"})
		return
	}
	receipt, err := h.billing.Charge(ctx, order)
	if err != nil {
		_ = h.repo.UpdateStatus(ctx, order.ID, store.StatusPaymentFailed)
		writeJSON(w, http.StatusPaymentRequired, apiError{Code: "payment_failed", Message: err.Error()})
		return
	}
	h.log.InfoContext(ctx, "order created", "order", order.ID, "total", receipt.Total)
	writeJSON(w, http.StatusCreated, orderResponse{Order: order, Receipt: receipt})
}"#;

fn symbol_source(syms: &[Sym]) -> Entry {
    let mut rng = Rng::new(0xC0DE_0005);
    let s = find(syms, "OrderHandler.Create");
    let lines = CREATE_SOURCE.lines().count() as u64;
    Entry::layout(
        "get_symbol_source",
        "code-intelligence",
        "get_symbol_source of an HTTP handler: 45 lines of Go with tabs, quotes and a doc comment",
        obj([
            ("id", json!(s.id())),
            ("kind", json!(s.kind)),
            ("name", json!(s.short_name())),
            ("path", json!(s.path)),
            ("start_line", json!(s.line)),
            ("end_line", json!(s.line + lines - 4)),
            ("from_line", json!(s.line - 3)),
            ("sig", json!(s.sig)),
            ("etag", json!(etag(&mut rng))),
            ("source", json!(CREATE_SOURCE)),
        ]),
    )
}

const SOURCES: &[(&str, &str)] = &[
    (
        "applyTax",
        "func applyTax(amount Money, rate Rate) Money {\n\t// Banker's rounding on the cent, as the tax authority requires.\n\treturn Money(math.RoundToEven(float64(amount) * float64(rate) / 10000))\n}",
    ),
    (
        "ParseToken",
        "func ParseToken(s *Signer, raw string) (Claims, error) {\n\tparts := strings.Split(raw, \".\")\n\tif len(parts) != 3 {\n\t\treturn Claims{}, fmt.Errorf(\"auth: malformed token: %d parts\", len(parts))\n\t}\n\tif !hmac.Equal(s.mac(parts[0]+\".\"+parts[1]), decodeSegment(parts[2])) {\n\t\treturn Claims{}, ErrBadSignature\n\t}\n\tvar c Claims\n\tif err := json.Unmarshal(decodeSegment(parts[1]), &c); err != nil {\n\t\treturn Claims{}, fmt.Errorf(\"auth: claims: %w\", err)\n\t}\n\tif time.Now().After(c.ExpiresAt) {\n\t\treturn Claims{}, ErrTokenExpired\n\t}\n\treturn c, nil\n}",
    ),
    (
        "RequireAuth",
        "func RequireAuth(signer *auth.Signer) func(http.Handler) http.Handler {\n\treturn func(next http.Handler) http.Handler {\n\t\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n\t\t\traw := strings.TrimPrefix(r.Header.Get(\"Authorization\"), \"Bearer \")\n\t\t\tclaims, err := auth.ParseToken(signer, raw)\n\t\t\tif err != nil {\n\t\t\t\twriteJSON(w, http.StatusUnauthorized, apiError{Code: \"unauthorized\", Message: err.Error()})\n\t\t\t\treturn\n\t\t\t}\n\t\t\tnext.ServeHTTP(w, r.WithContext(auth.WithClaims(r.Context(), claims)))\n\t\t})\n\t}\n}",
    ),
];

fn batch_symbols(syms: &[Sym]) -> Entry {
    let mut symbols: Vec<Value> = SOURCES
        .iter()
        .map(|&(name, source)| {
            let s = find(syms, name);
            obj([
                ("id", json!(s.id())),
                ("kind", json!(s.kind)),
                ("name", json!(s.short_name())),
                ("path", json!(s.path)),
                ("start_line", json!(s.line)),
                (
                    "end_line",
                    json!(s.line + source.lines().count() as u64 - 1),
                ),
                ("sig", json!(s.sig)),
                ("source", json!(source)),
                ("error", json!("")),
            ])
        })
        .collect();
    symbols.push(obj([
        (
            "id",
            json!("internal/billing/stripe.go::StripeClient.Capture"),
        ),
        ("kind", json!("")),
        ("name", json!("")),
        ("path", json!("")),
        ("start_line", Value::Null),
        ("end_line", Value::Null),
        ("sig", json!("")),
        ("source", json!("")),
        (
            "error",
            json!("symbol not found (stale id? re-run search_symbols)"),
        ),
    ]));
    Entry::layout(
        "batch_symbols",
        "code-intelligence",
        "batch_symbols with source: three resolved functions and one id that no longer resolves",
        json!({"include_source": true, "symbols": symbols}),
    )
}

fn editing_context(syms: &[Sym]) -> Entry {
    let mut rng = Rng::new(0xC0DE_0006);
    let t = find(syms, "OrderRepo.Create");
    let callers = [
        "OrderHandler.Create",
        "CartHandler.Checkout",
        "sendOrderConfirmation",
    ]
    .map(|n| find(syms, n).symbol_ref());
    let dependencies = ["DB.Tx", "Order", "OrderStatus", "StatusPending", "DB"]
        .map(|n| find(syms, n).symbol_ref());
    Entry::layout(
        "get_editing_context",
        "code-intelligence",
        "get_editing_context for a repository method: target, callers, dependencies and tests",
        json!({
            "target": {
                "id": t.id(),
                "kind": t.kind,
                "name": t.short_name(),
                "path": t.path,
                "start_line": t.line,
                "end_line": t.end_line,
                "sig": t.sig,
                "etag": etag(&mut rng),
            },
            "callers": callers,
            "dependencies": dependencies,
            "tests": [
                "internal/store/orders_test.go",
                "internal/httpapi/orders_test.go",
                "test/e2e/checkout_test.go",
            ],
        }),
    )
}

fn smart_context(syms: &[Sym]) -> Entry {
    let mut rng = Rng::new(0xC0DE_0007);
    let picks = [
        (
            "OrderHandler.Create",
            "entry point of order creation; reads the Idempotency-Key header",
        ),
        (
            "OrderRepo.Create",
            "inserts the order row; needs a unique constraint on the key",
        ),
        (
            "decodeOrderRequest",
            "parses the request body that will carry the key",
        ),
        (
            "createOrderRequest",
            "request type to extend with IdempotencyKey",
        ),
        (
            "DB.Tx",
            "transaction helper used to make insert and key lookup atomic",
        ),
        (
            "Service.Charge",
            "must not charge twice when a request is retried",
        ),
        (
            "StripeClient.Charge",
            "forwards an idempotency key to the payment provider",
        ),
        ("Order", "the stored row; gains an idempotency_key column"),
        ("CartHandler.Checkout", "second caller of OrderRepo.Create"),
        (
            "writeJSON",
            "response writer used for the replayed response",
        ),
        (
            "RequestID",
            "middleware pattern to copy for header handling",
        ),
        (
            "Config.Validate",
            "where a key TTL setting would be validated",
        ),
    ];
    let mut score: f64 = 0.97;
    let symbols: Vec<Value> = picks
        .iter()
        .map(|&(name, reason)| {
            let s = find(syms, name);
            let row = obj([
                ("id", json!(s.id())),
                ("kind", json!(s.kind)),
                ("name", json!(s.short_name())),
                ("path", json!(s.path)),
                ("line", json!(s.line)),
                ("score", json!(score)),
                ("reason", json!(reason)),
            ]);
            score = ((score - rng.range(2, 9) as f64 / 100.0) * 100.0).round() / 100.0;
            row
        })
        .collect();
    Entry::layout(
        "smart_context",
        "code-intelligence",
        "smart_context for a task: ranked symbols with scores and one-line reasons",
        json!({
            "task": "add idempotency keys to order creation so that retried POST /v1/orders requests never charge twice",
            "symbols": symbols,
        }),
    )
}

fn hotspots(syms: &[Sym]) -> Entry {
    let mut rng = Rng::new(0xC0DE_0008);
    let mut items: Vec<(f64, Value)> = syms
        .iter()
        .filter(|s| matches!(s.kind, "function" | "method"))
        .take(40)
        .map(|s| {
            let fan_in = rng.range(0, 24);
            let fan_out = rng.range(1, 17);
            let cross_cut = rng.range(0, 6);
            let score = ((fan_in * 3 + fan_out * 2 + cross_cut * 5) as f64 / 1.37).round() / 10.0;
            (
                score,
                obj([
                    ("id", json!(s.id())),
                    ("name", json!(s.short_name())),
                    ("path", json!(s.path)),
                    ("line", json!(s.line)),
                    ("fan_in", json!(fan_in)),
                    ("fan_out", json!(fan_out)),
                    ("cross_cut", json!(cross_cut)),
                    ("score", json!(score)),
                ]),
            )
        })
        .collect();
    items.sort_by(|a, b| b.0.total_cmp(&a.0));
    items.truncate(20);
    let items: Vec<Value> = items.into_iter().map(|(_, v)| v).collect();
    Entry::layout(
        "analyze.hotspots",
        "code-intelligence",
        "analyze kind=hotspots: the 20 functions with the highest fan-in, fan-out and cross-package reach",
        json!({ "items": items }),
    )
}
