// Command shop is toolgate's example: a small order API on loopback and an
// agent's session with it through toolgate.
//
//	go run ./examples/shop                   # the session, start to end, in one process
//	go run ./examples/shop --db /tmp/shop.db # the same, keeping the journal for toolgate console
//	go run ./examples/shop --serve           # only the API, on 127.0.0.1:8080, for toolgate serve
//
// The API is described by openapi.yaml next to this file. It places,
// reads, deletes and refunds orders and lists API keys; toolgate exposes
// the first two kinds of operation and hides the rest.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

func main() {
	serveOnly := flag.Bool("serve", false, "only serve the API")
	addr := flag.String("addr", "127.0.0.1:8080", "where the API listens with --serve")
	lose := flag.Int("lose", 0, "with --serve: apply the next `N` order placements and drop their answers")
	keep := flag.String("db", "", "keep the journal in `FILE` (a new one), for toolgate console --db FILE; by default it is thrown away")
	flag.Parse()
	if *serveOnly {
		api := shopapi.New()
		api.LoseAnswers(*lose)
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "shop:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "shop API on http://%s/ (Ctrl-C stops it)\n", ln.Addr())
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		srv := &http.Server{Handler: api, ReadHeaderTimeout: 5 * time.Second}
		go func() { <-ctx.Done(); srv.Close() }()
		if err := srv.Serve(ln); err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, "shop:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), os.Stdout, specPath(), *keep); err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// specPath finds openapi.yaml next to this program's source, from the
// repository's root or from this directory.
func specPath() string {
	for _, p := range []string{"examples/shop/openapi.yaml", "openapi.yaml"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "examples/shop/openapi.yaml"
}

// run plays an agent's session: list the tools, place an order, place one
// whose answer is lost, try again, and call a hidden tool by name. The
// journal is kept in the file keep, if not "".
func run(ctx context.Context, out io.Writer, specPath, keep string) error {
	api := shopapi.New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	upstream := &http.Server{Handler: api, ReadHeaderTimeout: 5 * time.Second}
	go upstream.Serve(ln)
	defer upstream.Close()

	doc, err := spec.Load(specPath)
	if err != nil {
		return err
	}
	cfg := config.Default()
	cfg.Deadline = 5 * time.Second
	cat, err := toolgate.Build(doc, cfg)
	if err != nil {
		return err
	}
	dbPath := keep
	if keep == "" {
		dir, err := os.MkdirTemp("", "toolgate-shop-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dbPath = filepath.Join(dir, "journal.db")
	} else if _, err := os.Stat(keep); err == nil {
		return fmt.Errorf("%s exists: give --db a new file, so that the session starts from an empty journal", keep)
	}
	db, err := sqlstore.Open(ctx, dbPath, sqlstore.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	j := journal.New(db.JournalStore(), journal.Options{})
	caller, err := toolgate.NewCaller(cat, "http://"+ln.Addr().String(), cfg.Upstream, os.Getenv, nil, j)
	if err != nil {
		return err
	}
	srv, err := toolgate.NewServer(cat, caller)
	if err != nil {
		return err
	}

	// The agent's side: the SDK's client, connected in memory.
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "shop-example", Version: "1"}, nil)
	session, err := client.Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer session.Close()

	fmt.Fprintf(out, "The document has %d operations; the agent is shown these tools:\n", len(cat.Tools))
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	for _, t := range tools.Tools {
		a := t.Annotations
		fmt.Fprintf(out, "  %-13s readOnly=%-5v destructive=%-5v idempotent=%v\n", t.Name, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint)
	}

	call := func(what, name string, args map[string]any) error {
		arg, _ := json.Marshal(args)
		fmt.Fprintf(out, "\n%s\n> %s %s\n", what, name, arg)
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			// A protocol error, not a tool result: the server does not
			// know the tool.
			fmt.Fprintf(out, "  error: %v\n", err)
			return nil
		}
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				fmt.Fprintf(out, "  %s\n", strings.ReplaceAll(strings.TrimSpace(t.Text), "\n", "\n  "))
			}
		}
		return nil
	}
	order := map[string]any{"body": map[string]any{"sku": "A1", "quantity": 2}}
	steps := []struct {
		what, tool string
		args       map[string]any
		before     func()
	}{
		{what: "Place an order:", tool: "createOrder", args: order},
		{what: "Place another; the API applies it, then the connection drops before the answer:", tool: "createOrder",
			args: map[string]any{"body": map[string]any{"sku": "B7", "quantity": 1}}, before: func() { api.LoseAnswers(1) }},
		{what: "The agent's reflex, the same call again:", tool: "createOrder",
			args: map[string]any{"body": map[string]any{"sku": "B7", "quantity": 1}}},
		{what: "What the result told it to do instead:", tool: "listOrders", args: map[string]any{}},
		{what: "A hidden tool, called by name:", tool: "deleteOrder", args: map[string]any{"id": "o1"}},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		if err := call(s.what, s.tool, s.args); err != nil {
			return err
		}
	}
	ambiguous, err := j.List(ctx, journal.Filter{Kind: toolgate.JournalKind, States: []journal.State{journal.Ambiguous}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe API holds %d orders from %d placements sent; the journal keeps %d call with an unknown outcome for a person to settle (toolgate calls, toolgate resolve).\n",
		api.Orders(), api.Effects(), len(ambiguous))
	if keep != "" {
		fmt.Fprintf(out, "The journal is in %s: toolgate console %s --db %s shows the call, to settle it.\n", keep, specPath, keep)
	}
	return nil
}
