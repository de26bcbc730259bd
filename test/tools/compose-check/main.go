// compose-check: the docker-compose.yml checks that need Docker Compose's own loader, without Docker. It is
// compose-go, the library `docker compose` is built on, at a pinned version (go.mod): it parses the file,
// interpolates ${...} from the environment (failing on a required variable that is missing), validates
// against the Compose Specification's schema, checks consistency (depends_on, volumes, networks) and
// prints the normalised project as JSON. `compose-check yaml FILE` prints any YAML file as JSON (the
// deploy/ configurations), with the same parser.
//
// Built by .ci/run (and by test/helpers/compose-check.ts when missing) into the per-user cache.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
	"go.yaml.in/yaml/v3"
)

func main() {
	if len(os.Args) < 3 {
		fail(fmt.Errorf("usage: compose-check compose FILE [PROFILE...] | compose-check yaml FILE"))
	}
	var out any
	var err error
	switch os.Args[1] {
	case "compose":
		out, err = loadCompose(os.Args[2], os.Args[3:])
	case "yaml":
		out, err = loadYaml(os.Args[2])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(data))
}

// loadCompose reads only the process environment (never a .env beside the file), so a test decides it.
func loadCompose(file string, profiles []string) (any, error) {
	opts, err := cli.NewProjectOptions([]string{file}, cli.WithOsEnv, cli.WithProfiles(profiles), cli.WithConsistency(true))
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

func loadYaml(file string) (any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return doc, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
