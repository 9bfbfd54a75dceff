// Package release makes what a release publishes beside the binaries: the
// MCP registry's entry for toolgate (server.json), for the version the
// release stamps. scripts/release.sh writes it with cmd/serverjson.
package release

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SchemaURL is the version of the registry's server.json schema the entry
// follows.
const SchemaURL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// Repository is where the source and the releases are.
const Repository = "https://github.com/rubicon-go/rubicon"

// ServerJSON returns toolgate's entry in the MCP registry for version (a
// semver tag such as v1.2.3): its name, what it is, where its source is,
// and how to install it. toolgate is a Go program, which none of the
// registry's package types (npm, PyPI, NuGet, OCI, MCPB) carries, so the
// entry lists no package and says how to install it in the publisher's
// metadata.
func ServerJSON(version string) ([]byte, error) {
	v := strings.TrimPrefix(version, "v")
	if v == version || v == "" {
		return nil, fmt.Errorf("release: version %q: give a tag such as v1.2.3", version)
	}
	entry := map[string]any{
		"$schema":     SchemaURL,
		"name":        "io.github.rubicon-go/toolgate",
		"title":       "toolgate",
		"description": "An OpenAPI document as MCP tools, with risk classes, hidden destructive tools and safe retries",
		"version":     v,
		"websiteUrl":  Repository + "#toolgate",
		"repository":  map[string]any{"url": Repository, "source": "github", "subfolder": "cmd/toolgate"},
		"_meta": map[string]any{
			"io.modelcontextprotocol.registry/publisher-provided": map[string]any{
				"install": map[string]any{
					"go":       "go install github.com/rubicon-go/rubicon/cmd/toolgate@" + version,
					"binaries": Repository + "/releases/tag/" + version,
				},
				"configure": "toolgate client-config SPEC --client claude-desktop|claude-code|vscode|cursor prints the client's entry",
			},
		},
	}
	b, err := json.MarshalIndent(entry, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
