package io.homa.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The line between a module's API and its internals, as ArchUnit conditions.
 *
 * <p>Automatic modules export every package, so Java itself does not stop a user from reaching
 * {@code ...internal...} types; what keeps them out of reach is that no API type lets them through.
 * A class is API when it is public in an API package and every class enclosing it is public too; its
 * API members are the public and protected ones that the compiler wrote (not synthetic or bridge
 * methods). {@link #exposeNoInternalType} fails when the supertypes, type parameters, or a member's
 * return, parameter, field, thrown or generic argument types of an API class name an internal type.
 */
final class ApiBoundary {

    private ApiBoundary() {
    }

    /** Whether a package name is internal: it has an {@code internal} segment. */
    static boolean isInternalPackage(String packageName) {
        return ("." + packageName + ".").contains(".internal.");
    }

    /** Whether a class is part of its package's public surface: public, and so is every enclosing class. */
    static boolean isApiClass(JavaClass javaClass) {
        if (javaClass.isAnonymousClass() || javaClass.isLocalClass() || isInternalPackage(javaClass.getPackageName())) {
            return false;
        }
        for (JavaClass c = javaClass; c != null; c = c.getEnclosingClass().orElse(null)) {
            Set<JavaModifier> modifiers = c.getModifiers();
            boolean visible = modifiers.contains(JavaModifier.PUBLIC)
                    || c.isNestedClass() && modifiers.contains(JavaModifier.PROTECTED);
            if (!visible || modifiers.contains(JavaModifier.SYNTHETIC)) {
                return false;
            }
        }
        return true;
    }

    /**
     * An API class's public and protected signatures name no type in an internal package (of any
     * module). The description of each violation names the class, the member and the internal type.
     */
    static ArchCondition<JavaClass> exposeNoInternalType() {
        return exposeNoType("expose no internal type in a public or protected signature",
                type -> isInternalPackage(type.getPackageName()));
    }

    /** As {@link #exposeNoInternalType()}, for any rule on the exposed type (tests use it on fixtures). */
    static ArchCondition<JavaClass> exposeNoType(String description, Predicate<JavaClass> forbidden) {
        return new ArchCondition<>(description) {
            @Override
            public void check(JavaClass javaClass, ConditionEvents events) {
                for (String violation : violations(javaClass, forbidden)) {
                    events.add(SimpleConditionEvent.violated(javaClass, violation));
                }
            }
        };
    }

    static List<String> violations(JavaClass javaClass, Predicate<JavaClass> forbidden) {
        List<String> found = new ArrayList<>();
        if (!isApiClass(javaClass)) {
            return found;
        }
        String name = javaClass.getName();
        javaClass.getSuperclass().ifPresent(t -> check(found, name + " extends", t, forbidden));
        javaClass.getInterfaces().forEach(t -> check(found, name + " implements", t, forbidden));
        javaClass.getTypeParameters().forEach(t -> check(found, name + " type parameter", t, forbidden));
        for (JavaMember member : javaClass.getMembers()) {
            if (!isApiMember(member)) {
                continue;
            }
            String where = name + "." + member.getName();
            if (member instanceof JavaField field) {
                check(found, where + " field type", field.getType(), forbidden);
            } else if (member instanceof JavaCodeUnit codeUnit) {
                check(found, where + " return type", codeUnit.getReturnType(), forbidden);
                codeUnit.getParameterTypes().forEach(t -> check(found, where + " parameter", t, forbidden));
                codeUnit.getTypeParameters().forEach(t -> check(found, where + " type parameter", t, forbidden));
                codeUnit.getThrowsClause().getTypes().forEach(t -> check(found, where + " throws", t, forbidden));
            }
        }
        return found;
    }

    private static boolean isApiMember(JavaMember member) {
        Set<JavaModifier> modifiers = member.getModifiers();
        if (modifiers.contains(JavaModifier.SYNTHETIC) || modifiers.contains(JavaModifier.BRIDGE)) {
            return false;
        }
        return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED)
                && !member.getOwner().getModifiers().contains(JavaModifier.FINAL);
    }

    private static void check(List<String> found, String where, JavaType type, Predicate<JavaClass> forbidden) {
        Set<JavaClass> involved = new LinkedHashSet<>(type.getAllInvolvedRawTypes());
        for (JavaClass raw : involved) {
            JavaClass base = raw.isArray() ? raw.getBaseComponentType() : raw;
            if (forbidden.test(base)) {
                found.add(where + " names " + base.getName());
            }
        }
    }
}
