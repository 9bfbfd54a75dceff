// Package shopapi is the small API that toolgate's tests and its example
// program serve: the operations of examples/shop/openapi.yaml over
// in-memory data.
package shopapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Order is an order.
type Order struct {
	ID       string `json:"id"`
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// API serves the shop.
type API struct {
	// Token, if set, is the bearer token every request must carry.
	Token string

	mu sync.Mutex
	// lose is how many more order placements are applied and then lose
	// their answer: the connection is closed instead.
	lose    int
	orders  map[string]Order
	next    int
	effects int
}

// New returns a shop with no orders.
func New() *API { return &API{orders: map[string]Order{}} }

// LoseAnswers makes the next n order placements apply, then close the
// connection without answering, as a proxy that dies at the wrong moment
// would.
func (a *API) LoseAnswers(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lose = n
}

// Orders returns how many orders exist.
func (a *API) Orders() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.orders)
}

// Effects counts the requests that changed something.
func (a *API) Effects() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.effects
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.Token != "" && r.Header.Get("Authorization") != "Bearer "+a.Token {
		reply(w, http.StatusUnauthorized, map[string]string{"error": "missing or wrong token"})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == "GET" && r.URL.Path == "/orders":
		list := []Order{}
		for _, o := range a.orders {
			list = append(list, o)
		}
		reply(w, 200, map[string]any{"orders": list})
	case r.Method == "POST" && r.URL.Path == "/orders":
		var in struct {
			SKU      string `json:"sku"`
			Quantity int    `json:"quantity"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SKU == "" || in.Quantity < 1 {
			reply(w, 400, map[string]string{"error": "give a sku and a quantity of 1 or more"})
			return
		}
		a.next++
		a.effects++
		o := Order{ID: fmt.Sprintf("o%d", a.next), SKU: in.SKU, Quantity: in.Quantity}
		a.orders[o.ID] = o
		if a.lose > 0 {
			a.lose--
			panic(http.ErrAbortHandler) // closes the connection unanswered
		}
		reply(w, 201, o)
	case len(parts) == 2 && parts[0] == "orders" && r.Method == "GET":
		o, ok := a.orders[parts[1]]
		if !ok {
			reply(w, 404, map[string]string{"error": "no such order"})
			return
		}
		reply(w, 200, o)
	case len(parts) == 2 && parts[0] == "orders" && r.Method == "DELETE":
		if _, ok := a.orders[parts[1]]; !ok {
			reply(w, 404, map[string]string{"error": "no such order"})
			return
		}
		delete(a.orders, parts[1])
		a.effects++
		w.WriteHeader(204)
	case len(parts) == 3 && parts[0] == "orders" && parts[2] == "refund" && r.Method == "POST":
		a.effects++
		reply(w, 200, map[string]string{"refunded": parts[1]})
	case r.URL.Path == "/admin/api-keys":
		reply(w, 200, map[string]any{"keys": []string{"k-1"}})
	case len(parts) == 2 && parts[0] == "categories":
		reply(w, 200, map[string]any{"name": "category " + parts[1], "children": []any{}})
	default:
		reply(w, 404, map[string]string{"error": "no such endpoint"})
	}
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
