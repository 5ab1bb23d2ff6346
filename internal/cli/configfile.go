package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/grit-run/grit/internal/suggest"
)

// configFlag is the root's --config: a YAML file of settings, below the
// flags and the GRIT_* variables and above the defaults.
var configFlag = dsnFlag{"config", "GRIT_CONFIG", "", "a YAML file of settings, KEY: VALUE, with the names grit config lists; flags and GRIT_* variables win over it"}

// configFile is a config file's settings: each key's value and line.
type configFile struct {
	name   string
	values map[string]fileValue
}

type fileValue struct {
	value string
	line  int
}

// value is the file's value of the setting key, if it has one, and where
// it came from ("file NAME:LINE").
func (f *configFile) value(key string) (v, src string, ok bool) {
	if f == nil {
		return "", "", false
	}
	fv, ok := f.values[key]
	return fv.value, fmt.Sprintf("file %s:%d", f.name, fv.line), ok
}

// configKeys are the keys a config file may hold: the store, the read
// store, the notify store and every knob, by their flags' names.
func configKeys() []string {
	keys := []string{storeFlag.name, readStoreFlag.name, notifyStoreFlag.name}
	for _, k := range allKnobs() {
		keys = append(keys, k.name)
	}
	return keys
}

// parseConfigFile reads a config file named name: a YAML mapping of the
// keys of configKeys to single values (a string, number or duration). An
// unknown key, a repeated one, a list or mapping as a value, and YAML
// that does not parse are errors naming name:line and the key, every one
// found.
func parseConfigFile(name string, data []byte) (*configFile, error) {
	f := &configFile{name: name, values: map[string]fileValue{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if line, rest, ok := strings.Cut(strings.TrimPrefix(msg, "line "), ": "); ok && strings.HasPrefix(msg, "line ") {
			return nil, fmt.Errorf("config %s:%s: %s (it is not YAML)", name, line, rest)
		}
		return nil, fmt.Errorf("config %s: %s (it is not YAML)", name, msg)
	}
	if len(doc.Content) == 0 {
		return f, nil // empty: no settings
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config %s:%d: want settings as KEY: VALUE lines (e.g. lease: 30s), not %s", name, top.Line, kindName(top))
	}
	keys := configKeys()
	var errs []error
	bad := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config %s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		switch {
		case k.Kind != yaml.ScalarNode:
			bad(k.Line, "a key must be a name, not %s", kindName(k))
		case !slices.Contains(keys, k.Value):
			if s, ok := suggest.Closest(k.Value, keys); ok {
				bad(k.Line, "unknown key %q (did you mean %q?)", k.Value, s)
			} else {
				bad(k.Line, "unknown key %q (the keys are the settings grit config lists: %s)", k.Value, strings.Join(keys, ", "))
			}
		case f.values[k.Value].line != 0:
			bad(k.Line, "%s is set twice (first on line %d): keep one", k.Value, f.values[k.Value].line)
		case v.Kind != yaml.ScalarNode:
			bad(v.Line, "%s: want one value (a string, number or duration), not %s; write a list as a, b, c", k.Value, kindName(v))
		case v.Tag == "!!null":
			bad(v.Line, "%s: no value: give one, or remove the line for the default", k.Value)
		default:
			f.values[k.Value] = fileValue{v.Value, k.Line}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a " + strings.TrimPrefix(n.ShortTag(), "!!")
}

// loadConfig reads the --config file (or GRIT_CONFIG's), once; nil
// without one. Its errors are usage errors.
func (e *env) loadConfig() (*configFile, error) {
	if e.configDone {
		return e.config, e.configErr
	}
	e.configDone = true
	if e.configPath == "" {
		return nil, nil
	}
	data, err := os.ReadFile(e.configPath)
	if err != nil {
		e.configErr = usageErr("config: %v: check --config (%s)", err, configFlag.env)
		return nil, e.configErr
	}
	e.config, err = parseConfigFile(e.configPath, data)
	if err != nil {
		e.configErr = &exitError{code: exitUsage, err: err}
	}
	return e.config, e.configErr
}
