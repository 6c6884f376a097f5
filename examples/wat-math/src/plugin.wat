;; A core module in the canonical ABI: each export of the WIT world is a function exported under its WIT name, with
;; core types for its WIT types (u64 is i64; u32 and bool are i32; a string argument is a pointer and a length into
;; this module's memory, where the host copies it through cabi_realloc).
(module
  (memory (export "memory") 1)

  ;; Where the next allocation goes. Nothing outlives a call, so each call frees all (see count-vowels).
  (global $heap (mut i32) (i32.const 1024))

  ;; The allocator the canonical ABI calls to copy arguments in: a bump allocator, growing memory when it must.
  (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    (local $ptr i32) (local $end i32)
    (local.set $ptr
      (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
               (i32.sub (i32.const 0) (local.get $align))))
    (local.set $end (i32.add (local.get $ptr) (local.get $size)))
    (if (i32.gt_u (local.get $end) (i32.shl (memory.size) (i32.const 16)))
      (then
        (if (i32.eq (memory.grow (i32.sub (i32.shr_u (i32.add (local.get $end) (i32.const 0xffff)) (i32.const 16)) (memory.size)))
                    (i32.const -1))
          (then unreachable))))
    (global.set $heap (local.get $end))
    (local.get $ptr))

  (func (export "gcd") (param $a i64) (param $b i64) (result i64)
    (local $t i64)
    (block $done
      (loop $next
        (br_if $done (i64.eqz (local.get $b)))
        (local.set $t (i64.rem_u (local.get $a) (local.get $b)))
        (local.set $a (local.get $b))
        (local.set $b (local.get $t))
        (br $next)))
    (local.get $a))

  (func (export "is-prime") (param $n i32) (result i32)
    (local $d i32)
    (if (i32.lt_u (local.get $n) (i32.const 2)) (then (return (i32.const 0))))
    (local.set $d (i32.const 2))
    (block $done
      (loop $next
        ;; stop once d * d > n, multiplied in 64 bits so that it cannot wrap
        (br_if $done
          (i64.gt_u (i64.mul (i64.extend_i32_u (local.get $d)) (i64.extend_i32_u (local.get $d)))
                    (i64.extend_i32_u (local.get $n))))
        (if (i32.eqz (i32.rem_u (local.get $n) (local.get $d))) (then (return (i32.const 0))))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  (func (export "count-vowels") (param $ptr i32) (param $len i32) (result i32)
    (local $i i32) (local $c i32) (local $count i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        ;; setting bit 5 lowercases an ASCII letter (and makes no other byte a vowel)
        (local.set $c (i32.or (i32.load8_u (i32.add (local.get $ptr) (local.get $i))) (i32.const 0x20)))
        (if (i32.or
              (i32.or (i32.eq (local.get $c) (i32.const 0x61)) (i32.eq (local.get $c) (i32.const 0x65)))
              (i32.or (i32.eq (local.get $c) (i32.const 0x69))
                      (i32.or (i32.eq (local.get $c) (i32.const 0x6f)) (i32.eq (local.get $c) (i32.const 0x75)))))
          (then (local.set $count (i32.add (local.get $count) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    ;; the text was this call's only allocation: free it
    (global.set $heap (i32.const 1024))
    (local.get $count)))
