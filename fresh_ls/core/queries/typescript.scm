; Definitions for TypeScript, also used for TSX (same node types).
; See fresh_ls/core/symbols.py for the capture convention. Wrapping statements (export,
; const/let/var with a single declarator) are matched too; the extractor keeps the widest
; node per @name, so `export` and class decorators are inside the extent.
; Bodiless signatures (overload heads, `declare function`, abstract methods, interface
; members) are not definitions.

[
  (function_declaration name: (identifier) @name)
  (generator_function_declaration name: (identifier) @name)
  (export_statement
    declaration: [
      (function_declaration name: (identifier) @name)
      (generator_function_declaration name: (identifier) @name)
    ])
] @definition.function

[
  (class_declaration name: (_) @name)
  (abstract_class_declaration name: (_) @name)
  (export_statement
    declaration: [
      (class_declaration name: (_) @name)
      (abstract_class_declaration name: (_) @name)
    ])
] @definition.class

[
  (interface_declaration name: (_) @name)
  (export_statement declaration: (interface_declaration name: (_) @name))
] @definition.interface

[
  (enum_declaration name: (_) @name)
  (export_statement declaration: (enum_declaration name: (_) @name))
] @definition.enum

[
  (internal_module name: (_) @name)
  (export_statement declaration: (internal_module name: (_) @name))
] @definition.namespace

; module Foo.Bar {} / declare module "foo" {} (the quotes are not part of the name)
[
  (module name: (identifier) @name)
  (module name: (nested_identifier) @name)
  (module name: (string (string_fragment) @name))
] @definition.module

; type T = { ... } has a body; type U = string is an alias and not a definition.
[
  (type_alias_declaration name: (_) @name value: (object_type))
  (export_statement
    declaration: (type_alias_declaration name: (_) @name value: (object_type)))
] @definition.type

(class_body
  (method_definition
    name: (_) @name) @definition.method)

; handler = () => {} as a class field
(class_body
  (public_field_definition
    name: (_) @name
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)

