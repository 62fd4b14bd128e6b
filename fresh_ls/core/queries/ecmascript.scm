; Functions and classes bound to variables, shared by JavaScript, TypeScript and TSX (the
; grammars agree on these node types). Loaded after each language's own file.

; const f = () => {} / const f = function () {} / const C = class {}
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

; With a single declarator the whole statement (keyword and `;`) is the extent.
[
  (lexical_declaration
    .
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)])
    .)
  (variable_declaration
    .
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression) (generator_function)])
    .)
  (export_statement
    declaration: (lexical_declaration
      .
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression) (generator_function)])
      .))
] @definition.function

[
  (lexical_declaration
    .
    (variable_declarator name: (identifier) @name value: (class))
    .)
  (variable_declaration
    .
    (variable_declarator name: (identifier) @name value: (class))
    .)
] @definition.class
