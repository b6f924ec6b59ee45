/// A value kept out of line: an `indirect` case holds it in a box of its own, so that its
/// holder carries one reference for it, with a value's semantics (a change makes a new box, and
/// no copy sees another's change), unlike a class.
@usableFromInline enum OutOfLine<Value> {
    indirect case value(Value)

    @inlinable init(_ value: Value) {
        self = .value(value)
    }

    @inlinable var value: Value {
        switch self {
        case .value(let value): value
        }
    }
}

extension OutOfLine: Sendable where Value: Sendable {}
