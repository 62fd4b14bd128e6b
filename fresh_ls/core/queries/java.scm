; Definitions for Java. See fresh_ls/core/symbols.py for the capture convention.
; Overloads are separate definitions sharing a dotted name (told apart by ordinal).
; Abstract and interface methods without a body are not definitions.

(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

[
  (interface_declaration name: (identifier) @name)
  (annotation_type_declaration name: (identifier) @name)
] @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(method_declaration
  name: (identifier) @name
  body: (block)) @definition.method

[
  (constructor_declaration name: (identifier) @name)
  (compact_constructor_declaration name: (identifier) @name)
] @definition.method

; Runnable r = () -> {...}; as a field or a local. With a single declarator the whole
; declaration (type, modifiers and `;`) is the extent; the extractor keeps the widest.
(variable_declarator
  name: (identifier) @name
  value: (lambda_expression)) @definition.function

[
  (field_declaration
    type: (_)
    .
    declarator: (variable_declarator name: (identifier) @name value: (lambda_expression))
    .)
  (local_variable_declaration
    type: (_)
    .
    declarator: (variable_declarator name: (identifier) @name value: (lambda_expression))
    .)
] @definition.function
