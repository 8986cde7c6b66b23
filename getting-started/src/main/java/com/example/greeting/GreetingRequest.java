package com.example.greeting;

public record GreetingRequest(String name) {
}
