; Definitions for Ruby. See fresh_ls/core/symbols.py for the capture convention.
; class Shop::Cart names itself Shop.Cart. `def self.x` inside class Cart is Cart.x;
; `def obj.x` elsewhere is obj.x.

(class
  name: (_) @name) @definition.class

(module
  name: (_) @name) @definition.module

(method
  name: (_) @name) @definition.function

(singleton_method
  object: (self)
  name: (_) @name) @definition.method

(singleton_method
  object: [(identifier) (constant)] @scope
  name: (_) @name) @definition.method

; f = ->(x) {...} / f = lambda { ... } / f = proc do ... end
(assignment
  left: (identifier) @name
  right: (lambda)) @definition.function

(assignment
  left: (identifier) @name
  right: (call
    method: (identifier) @_callee
    block: [(block) (do_block)])
  (#any-of? @_callee "lambda" "proc")) @definition.function
