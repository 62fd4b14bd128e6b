; Definitions for Go. See fresh_ls/core/symbols.py for the capture convention.
; A lone `type X struct {...}` is matched both as the type_spec and as the whole
; type_declaration; the extractor keeps the widest node per @name, so the `type` keyword is
; inside the extent. Inside a `type ( ... )` group each spec is its own definition.
; `type A = B` (alias) and `type N int` have no body and are not definitions.

(function_declaration
  name: (identifier) @name) @definition.function

; func (c Cart) Total(), func (c *Cart) Total(), func (b *Box[T]) Get() -> Cart.Total, Box.Get
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @scope
        (pointer_type (type_identifier) @scope)
        (generic_type type: (type_identifier) @scope)
        (pointer_type (generic_type type: (type_identifier) @scope))
      ]))
  name: (field_identifier) @name) @definition.method

[
  (type_spec name: (type_identifier) @name type: (struct_type))
  (type_declaration . (type_spec name: (type_identifier) @name type: (struct_type)) .)
] @definition.struct

[
  (type_spec name: (type_identifier) @name type: (interface_type))
  (type_declaration . (type_spec name: (type_identifier) @name type: (interface_type)) .)
] @definition.interface

; f := func() {...} / var f = func() {...} (single name, single value)
[
  (short_var_declaration
    left: (expression_list . (identifier) @name .)
    right: (expression_list . (func_literal) .))
  (var_spec
    .
    name: (identifier) @name
    value: (expression_list . (func_literal) .))
  (var_declaration
    .
    (var_spec
      .
      name: (identifier) @name
      value: (expression_list . (func_literal) .))
    .)
] @definition.function
