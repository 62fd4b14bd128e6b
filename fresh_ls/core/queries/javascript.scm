; Definitions for JavaScript. See fresh_ls/core/symbols.py for the capture convention.
; Wrapping statements (export, const/let/var with a single declarator) are matched too;
; the extractor keeps the widest node per @name, so `export` and decorators are inside.

[
  (function_declaration name: (identifier) @name)
  (generator_function_declaration name: (identifier) @name)
] @definition.function

[
  (class_declaration name: (identifier) @name)
  (export_statement
    declaration: (class_declaration name: (identifier) @name))
] @definition.class

(export_statement
  declaration: [
    (function_declaration name: (identifier) @name)
    (generator_function_declaration name: (identifier) @name)
  ]) @definition.function

; Methods of a class (object-literal methods are not definitions: they have no owner name).
(class_body
  (method_definition
    name: (_) @name) @definition.method)

; static handler = () => {}
(class_body
  (field_definition
    property: (_) @name
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)

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
