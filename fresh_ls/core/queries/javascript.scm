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

