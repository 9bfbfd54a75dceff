package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rubicon-go/rubicon/internal/command"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// clientFlags are client-config's flags.
type clientFlags struct {
	config, upstream, mode, client, name string
}

// clients are the MCP clients whose configuration client-config writes.
var clients = []string{"claude-desktop", "claude-code", "vscode", "cursor"}

// clientConfigCommand is "toolgate client-config": the entry an MCP
// client needs to start toolgate serve, with absolute paths and the
// environment the server reads.
func clientConfigCommand() *command.Command {
	var cf clientFlags
	return &command.Command{
		Name: "client-config", Args: []command.Arg{specArg}, DB: true,
		Synopsis: "SPEC [--config FILE] [--upstream URL] [--mode MODE] [--client " + strings.Join(clients, "|") + "] [--name NAME] [--db DSN]",
		Summary:  "print the entry an MCP client needs to start toolgate serve over stdio",
		Help: `An MCP client starts its servers itself, from its own working directory and
with its own environment: the entry names this toolgate, the document and the
configuration by their absolute paths, and sets $TOOLGATE_DB to the journal
this shell's toolgate uses now (--db, $TOOLGATE_DB or the data directory), so
that 'toolgate calls' and 'toolgate resolve' here see the client's calls.

The upstream's secrets are never printed: the entry refers to the
environment variables the configuration names, in the client's own way of
reading them (VS Code asks for them; Claude Code and Cursor read your
environment), or says where to put them (Claude Desktop).

Where the entry goes:
  claude-desktop  claude_desktop_config.json, under "mcpServers"
                  (macOS: ~/Library/Application Support/Claude/,
                  Windows: %APPDATA%\Claude\)
  claude-code     .mcp.json at the project's root, under "mcpServers", or
                  'claude mcp add-json NAME' with the server's entry
  vscode          .vscode/mcp.json in the workspace, under "servers" and
                  "inputs" (or the user configuration: 'MCP: Open User
                  Configuration')
  cursor          ~/.cursor/mcp.json, or .cursor/mcp.json in the project,
                  under "mcpServers"`,
		Flags: func(f *pflag.FlagSet) {
			f.StringVar(&cf.config, "config", "", "the configuration, a YAML `FILE`")
			f.StringVar(&cf.upstream, "upstream", "", "the upstream API's base `URL`, passed on to serve")
			f.StringVar(&cf.mode, "mode", "", "serve's `MODE`: tools, search or auto")
			f.StringVar(&cf.client, "client", "claude-desktop", "the MCP `CLIENT`: "+strings.Join(clients, ", "))
			f.StringVar(&cf.name, "name", "", "the server's `NAME` in the client (default: from the document's title)")
		},
		Check: func(*command.Run) error {
			if !slices.Contains(clients, cf.client) {
				return command.Usagef("--client %q: give one of %s", cf.client, strings.Join(clients, ", "))
			}
			return nil
		},
		Run: func(ctx context.Context, r *command.Run) error { return clientConfig(ctx, r, cf) },
	}
}

// serverEntry is what starts toolgate serve, in the terms every client
// shares.
type serverEntry struct {
	command string
	args    []string
	env     map[string]string
	// secrets are the environment variables that carry the upstream's
	// secrets, with what each is.
	secrets []secretVar
}

type secretVar struct{ name, what string }

func clientConfig(ctx context.Context, r *command.Run, cf clientFlags) error {
	e, title, warnings, err := entryFor(ctx, r, cf)
	if err != nil {
		return err
	}
	name := cf.name
	if name == "" {
		name = serverName(title, r.Args[0])
	}
	out, err := render(cf.client, name, e)
	if err != nil {
		return err
	}
	r.Stdout.Write(out)
	for _, w := range warnings {
		fmt.Fprintln(r.Stderr, "toolgate client-config: "+w)
	}
	return nil
}

// entryFor loads the document and the configuration, as serve would,
// and returns the entry that starts serve with them from anywhere.
func entryFor(ctx context.Context, r *command.Run, cf clientFlags) (serverEntry, string, []string, error) {
	specPath, err := absFile(r.Args[0], "the document")
	if err != nil {
		return serverEntry{}, "", nil, err
	}
	args := []string{"serve", specPath}
	var configPath string
	if cf.config != "" {
		if configPath, err = absFile(cf.config, "the configuration"); err != nil {
			return serverEntry{}, "", nil, err
		}
		args = append(args, "--config", configPath)
	}
	cat, cfg, err := load(ctx, specPath, configPath)
	if err != nil {
		return serverEntry{}, "", nil, loadError(err)
	}
	if err := cat.MissingCredentials(); err != nil {
		// serve would refuse to start: say so now, not in the client.
		return serverEntry{}, "", nil, err
	}
	if cf.upstream != "" {
		args = append(args, "--upstream", cf.upstream)
	}
	if cf.mode != "" {
		args = append(args, "--mode", cf.mode)
	}
	args = append(args, "--stdio")

	exe, err := os.Executable()
	if err != nil {
		return serverEntry{}, "", nil, fmt.Errorf("finding this toolgate's path: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	var warnings []string
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		warnings = append(warnings, fmt.Sprintf("this toolgate (%s) was built by 'go run' and is removed when it ends: install it first (go install github.com/rubicon-go/rubicon/cmd/toolgate@latest) and run client-config with the installed one", exe))
	}
	dsn, err := r.DSN()
	if err != nil {
		return serverEntry{}, "", nil, err
	}
	db, dbWarning := journalFor(dsn)
	if dbWarning != "" {
		warnings = append(warnings, dbWarning)
	}
	e := serverEntry{command: exe, args: args, env: map[string]string{DBEnv: db}}
	e.secrets, warnings = secretsOf(cfg.Upstream, warnings)
	return e, cat.Doc.Title, warnings, nil
}

// absFile returns path made absolute, once it is known to be a file.
func absFile(path, what string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("%s %s: %w", what, path, err)
	}
	return abs, nil
}

// journalFor returns the journal the entry names: a file by its absolute
// path, a PostgreSQL DSN without its password (which the entry must not
// carry), and what the user should know about it.
func journalFor(dsn string) (string, string) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil || u.User == nil {
			return dsn, ""
		}
		if _, has := u.User.Password(); !has {
			return dsn, ""
		}
		u.User = url.UserPassword(u.User.Username(), "PASSWORD")
		return u.String(), "the journal's DSN carries a password, written PASSWORD in the entry: put it there, or in ~/.pgpass and out of the DSN"
	}
	if abs, err := filepath.Abs(strings.TrimPrefix(dsn, "file:")); err == nil && !strings.HasPrefix(dsn, "file:") {
		return abs, ""
	}
	return dsn, ""
}

// secretsOf lists the environment variables that carry up's secrets.
func secretsOf(up config.Upstream, warnings []string) ([]secretVar, []string) {
	var out []secretVar
	add := func(a config.Auth, what string) {
		switch {
		case a.Env != "":
			if !slices.ContainsFunc(out, func(s secretVar) bool { return s.name == a.Env }) {
				out = append(out, secretVar{a.Env, what})
			}
		case a.File != "" && !filepath.IsAbs(a.File):
			warnings = append(warnings, fmt.Sprintf("%s is read from %s, a relative path, which the client's server reads from the client's working directory: write an absolute path in the configuration", what, a.File))
		}
	}
	if a := up.Auth; a.NeedsSecret() {
		add(a, "the upstream's credential")
	}
	names := make([]string, 0, len(up.Schemes))
	for n := range up.Schemes {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if a := up.Schemes[n]; a.NeedsSecret() {
			add(a, "the credential of the scheme "+n)
		}
	}
	return out, warnings
}

var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// serverName makes the server's name in the client from the document's
// title, else its file name.
func serverName(title, specPath string) string {
	n := strings.Trim(nonName.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if n == "" {
		n = strings.Trim(nonName.ReplaceAllString(strings.ToLower(strings.TrimSuffix(filepath.Base(specPath), filepath.Ext(specPath))), "-"), "-")
	}
	if n == "" {
		n = "api"
	}
	return n
}

// render writes e as client's configuration, under name.
func render(client, name string, e serverEntry) ([]byte, error) {
	env := make(map[string]string, len(e.env)+len(e.secrets))
	for k, v := range e.env {
		env[k] = v
	}
	var doc any
	switch client {
	case "claude-desktop":
		// Claude Desktop reads no variables: the secret goes in the file.
		for _, s := range e.secrets {
			env[s.name] = "<" + s.what + ">"
		}
		doc = map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": e.command, "args": e.args, "env": env}}}
	case "claude-code":
		for _, s := range e.secrets {
			env[s.name] = "${" + s.name + "}"
		}
		doc = map[string]any{"mcpServers": map[string]any{name: map[string]any{"type": "stdio", "command": e.command, "args": e.args, "env": env}}}
	case "cursor":
		for _, s := range e.secrets {
			env[s.name] = "${env:" + s.name + "}"
		}
		doc = map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": e.command, "args": e.args, "env": env}}}
	case "vscode":
		inputs := []map[string]any{}
		for _, s := range e.secrets {
			id := strings.ToLower(strings.ReplaceAll(s.name, "_", "-"))
			env[s.name] = "${input:" + id + "}"
			inputs = append(inputs, map[string]any{"type": "promptString", "id": id, "description": s.what + " ($" + s.name + ")", "password": true})
		}
		doc = map[string]any{"inputs": inputs, "servers": map[string]any{name: map[string]any{"type": "stdio", "command": e.command, "args": e.args, "env": env}}}
	default:
		return nil, errors.New("unknown client " + client)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
