package com.example.greeting;

public record Greeting(String text) {
}
