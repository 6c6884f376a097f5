/**
 * The files `platform plugins init` writes: a plugin in the standard layout (plugin-layout.ts) that builds offline
 * with what the platform installs. Every export is documented, so every tool has a description.
 */

const config = (name: string, description: string) => `# The plugin's metadata, permissions and limits (schema 1.0). The platform checks it at upload.
schema_version: "1.0"
metadata:
  name: ${name}
  description: ${JSON.stringify(description)}
# permissions:                # nothing is allowed unless listed
#   network:
#     allow: [{ host: api.example.com }]
#   environment:
#     allow: [{ key: API_TOKEN }]   # its value comes from a .env file beside this one (packed with it)
resources:
  limits:
    memory: 64Mi
    timeout: 5s
`;

const witHeader = (name: string) => `// The plugin's interface. Each function the world exports is a tool named <plugin>_<function> (hyphens become
// underscores); the /// comment above it is the tool's description, and its parameters are the tool's arguments.
package local:${name};
`;

const JS_WIT = (name: string) => `${witHeader(name)}
world ${name} {
  /// Greets someone by name.
  export greet: func(name: string) -> string;

  /// Counts the words in a text: runs of characters between spaces.
  export word-count: func(text: string) -> u32;
}
`;

const JS_SOURCE = `// Each function the WIT world exports is exported here, its name in camelCase (word-count is wordCount).
// Strings, numbers, booleans, lists, records (objects) and options (undefined) map to plain JavaScript values.

export function greet(name) {
  return \`Hello, \${name}!\`;
}

export function wordCount(text) {
  return text.split(/\\s+/).filter(Boolean).length;
}
`;

const WAT_WIT = (name: string) => `${witHeader(name)}
world ${name} {
  /// Adds two whole numbers.
  export add: func(a: s32, b: s32) -> s32;

  /// Clamps a value to the range from low to high.
  export clamp: func(value: s32, low: s32, high: s32) -> s32;
}
`;

const WAT_SOURCE = `;; A core WebAssembly module: each function the WIT world exports is a function exported under its WIT name, with
;; the canonical ABI's types (s32 is i32, u64 is i64, bool is i32). Strings and lists need an exported cabi_realloc
;; (see examples/wat-math in the platform's repository).
(module
  (memory (export "memory") 1)

  (func (export "add") (param $a i32) (param $b i32) (result i32)
    (i32.add (local.get $a) (local.get $b)))

  (func (export "clamp") (param $value i32) (param $low i32) (param $high i32) (result i32)
    (select (local.get $low)
      (select (local.get $high) (local.get $value) (i32.gt_s (local.get $value) (local.get $high)))
      (i32.lt_s (local.get $value) (local.get $low)))))
`;

const readme = (name: string, lang: 'js' | 'wat') => `# ${name}

A tool plugin for the platform, written in ${lang === 'js' ? 'JavaScript (built with componentize-js)' : 'WebAssembly text (made a component with wasm-tools)'}.

| File | What it is |
|---|---|
| \`wit/world.wit\` | the interface: each exported function is a tool; its \`///\` comment is the tool's description |
| \`${lang === 'js' ? 'src/plugin.js' : 'src/plugin.wat'}\` | the implementation |
| \`platform.yaml\` | name, description, permissions and limits |
| \`dist/\` | what \`build\` and \`deploy\` write (not to be committed) |

\`\`\`bash
platform plugins build .                        # dist/${name}.wasm, and the tools it will have
platform plugins deploy . --bind-gateway demo   # build, pack, upload, wait until active, bind
\`\`\`

The tools are then \`${name.replaceAll('-', '_')}_${lang === 'js' ? 'greet' : 'add'}\` and so on, on every gateway or agent the plugin is bound to.
`;

const GITIGNORE = `dist/
.env
`;

/** The template's files, by path relative to the new folder. */
export function templateFiles(name: string, lang: 'js' | 'wat'): Record<string, string> {
  return {
    'platform.yaml': config(name, lang === 'js' ? 'Greets people and counts words.' : 'Adds and clamps numbers.'),
    'wit/world.wit': lang === 'js' ? JS_WIT(name) : WAT_WIT(name),
    [lang === 'js' ? 'src/plugin.js' : 'src/plugin.wat']: lang === 'js' ? JS_SOURCE : WAT_SOURCE,
    'README.md': readme(name, lang),
    '.gitignore': GITIGNORE,
  };
}
