window.rulesdslPreviews("burning_wheel/trait.html", {});
